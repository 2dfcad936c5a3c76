"""Fits the masked-LM head that the bundled all-MiniLM-L6-v2 lacks, so the neural method works offline.

The head is BERT's ``cls.predictions``: dense + GELU + LayerNorm, decoder tied to the encoder's word embeddings, plus
a bias over the vocabulary. The encoder stays frozen; only the head learns, from encoder states cached once. Run
``python -m engine.neuralhead --help``.
"""
