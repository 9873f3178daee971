"""`convert-checkpoint`: a folder's pickle weights (pytorch_model.bin) written as safetensors in a new folder."""
from __future__ import annotations


def add_parser(sub) -> None:
    c = sub.add_parser("convert-checkpoint", help="write a folder's pytorch_model.bin weights as safetensors",
                       description="Read pytorch_model.bin (or its shards) with torch.load(weights_only=True), "
                                   "which runs no code, and write a new folder with model.safetensors and the "
                                   "config and tokenizer files.")
    c.add_argument("--checkpoint", required=True, help="a local folder under the allowed roots")
    c.add_argument("--out", required=True, help="a new folder (it must not exist)")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    c.set_defaults(func=run)


def run(args) -> int:
    from explorer.results import strict_json
    from explorer.model.convert import convert_checkpoint

    done = convert_checkpoint(args.checkpoint, args.out)
    if args.json:
        print(strict_json(done.to_dict()))
    else:
        print(f"wrote {done.out}: {done.tensors} tensors in {', '.join(done.weights)}; copied: "
              f"{', '.join(done.copied) or 'nothing'}; left behind: {', '.join(done.skipped) or 'nothing'}")
    return 0
