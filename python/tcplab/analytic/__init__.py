"""Closed-form models: link framing and airtime, window and loss bounds, slow start, the
Eb/No -> BER curves and media-stream statistics; pure functions, no plan or result in them."""
