"""One view module per page: pages/<page>.py draws with explorer/ui/views/<page>.py, whose sections take the
sidebar's analysis whichever kind of classifier it is (a sentence classifier's or a token classifier's)."""
