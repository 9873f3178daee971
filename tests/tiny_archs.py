"""Tiny random `XxxForSequenceClassification` checkpoints of many architectures (hidden 32, 2 layers),
saved with save_pretrained next to a tokenizer, for parity tests and the architecture bench.

All share the embedded BERT tokenizer (its 30522 ids fit every vocab below); models whose forward takes
no token_type_ids get a tokenizer that does not produce them, as their real tokenizers do.
"""
from __future__ import annotations

from pathlib import Path

import torch
import transformers as tf
from transformers import AutoModelForSequenceClassification, AutoModelForTokenClassification, AutoTokenizer

from explorer.model.checkpoints import embedded_encoder_dir

LABELS = ("alpha", "beta", "gamma")
_BERTISH = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                max_position_embeddings=64)
_DECODER = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                intermediate_size=64, max_position_embeddings=64)

# model_type -> (config class, config kwargs, tokenizer produces token_type_ids)
CONFIGS: dict[str, tuple[str, dict, bool]] = {
    "bert": ("BertConfig", _BERTISH, True),
    "distilbert": ("DistilBertConfig", dict(dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=64), False),
    "roberta": ("RobertaConfig", dict(_BERTISH, pad_token_id=0), False),
    "xlm-roberta": ("XLMRobertaConfig", dict(_BERTISH, pad_token_id=0), False),
    "camembert": ("CamembertConfig", dict(_BERTISH, pad_token_id=0), False),
    "electra": ("ElectraConfig", dict(_BERTISH, embedding_size=16), True),
    "deberta": ("DebertaConfig", dict(_BERTISH, relative_attention=True, pos_att_type=["c2p", "p2c"]), True),
    "deberta-v2": ("DebertaV2Config", dict(_BERTISH, relative_attention=True, pos_att_type=["c2p", "p2c"],
                                           position_biased_input=False, type_vocab_size=0), False),
    "albert": ("AlbertConfig", dict(_BERTISH, embedding_size=16), True),
    "mpnet": ("MPNetConfig", dict(_BERTISH, pad_token_id=0), False),
    "modernbert": ("ModernBertConfig", dict(_BERTISH, pad_token_id=0, bos_token_id=101, eos_token_id=102,
                                            cls_token_id=101, sep_token_id=102, global_attn_every_n_layers=2,
                                            local_attention=16), False),
    "ernie": ("ErnieConfig", _BERTISH, True),
    "mobilebert": ("MobileBertConfig", dict(_BERTISH, embedding_size=16, intra_bottleneck_size=16,
                                            true_hidden_size=16, num_feedforward_networks=1), True),
    "gpt2": ("GPT2Config", dict(n_embd=32, n_layer=2, n_head=4, n_positions=64), False),  # no pad token
    "llama": ("LlamaConfig", dict(_DECODER, pad_token_id=102), False),  # eos-as-pad: [SEP] is pad
    "qwen2": ("Qwen2Config", dict(_DECODER, pad_token_id=0), False),
    "mistral": ("MistralConfig", dict(_DECODER, pad_token_id=0, sliding_window=None), False),
}
ARCHS = tuple(CONFIGS)
# Not an encoder plus a head (yet): each must be refused with one line.
UNSUPPORTED: dict[str, tuple[str, dict]] = {
    "xlnet": ("XLNetConfig", dict(d_model=32, n_layer=2, n_head=4, d_inner=64)),
    "bart": ("BartConfig", dict(d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4,
                                decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
                                max_position_embeddings=64, pad_token_id=0, bos_token_id=101, eos_token_id=102,
                                decoder_start_token_id=101)),
    "t5": ("T5Config", dict(d_model=32, num_layers=1, num_heads=4, d_kv=8, d_ff=64, pad_token_id=0,
                            eos_token_id=102, decoder_start_token_id=0)),
    "longformer": ("LongformerConfig", dict(_BERTISH, pad_token_id=0, attention_window=[4, 4])),
}


def config(model_type: str):
    name, kwargs, _ = CONFIGS[model_type] if model_type in CONFIGS else (*UNSUPPORTED[model_type], False)
    return getattr(tf, name)(vocab_size=30522, num_labels=len(LABELS), id2label=dict(enumerate(LABELS)),
                             label2id={n: i for i, n in enumerate(LABELS)}, **kwargs)


def save(model_type: str, root: Path, seed: int = 1, tokenizer=None, name: str = "", token: bool = False,
         **tokenizer_kwargs) -> Path:
    """Build, seed and save one tiny checkpoint under root/<name or tiny-model_type>; returns its folder.
    tokenizer: saved instead of the embedded BERT one (its ids must fit the 30522-row vocabulary).
    token: an `XxxForTokenClassification` (saved as tiny-token-<model_type> unless named) instead."""
    out = root / (name or (f"tiny-token-{model_type}" if token else f"tiny-{model_type}"))
    torch.manual_seed(seed)
    auto = AutoModelForTokenClassification if token else AutoModelForSequenceClassification
    model = auto.from_config(config(model_type))
    model.save_pretrained(out)
    type_ids = CONFIGS.get(model_type, (None, None, False))[2]
    names = ["input_ids", "token_type_ids", "attention_mask"] if type_ids else ["input_ids", "attention_mask"]
    tok = tokenizer or AutoTokenizer.from_pretrained(str(embedded_encoder_dir()), model_input_names=names,
                                                     **tokenizer_kwargs)
    tok.save_pretrained(out)
    return out
