"""Building the second look's sentence model: all-MiniLM-L6-v2 exported to ONNX and quantised to int8
(``python -m engine.onnxbuild``); needs the ``gpu`` extra (torch) and ``onnx``, never the installed app."""
