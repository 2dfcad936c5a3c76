"""Text analysis every layer shares, importing nothing of quire's but its errors: folding, stemming, term keys and
stop words (``terms``), sentence splitting (``sentences``, ``sentence_rules``), readable paths (``paths``)."""
