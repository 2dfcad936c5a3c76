"""The one piece of build configuration pyproject.toml cannot state: the repository's top-level ``resources/`` folder
(the static model, the neural head, calibration priors, icons, the menu entry) is built into the wheel as the
``engine._resources`` package data, so an installed quire reads it with importlib.resources wherever it was installed
(``pip install --user``, a venv anywhere, a zipapp). Everything else is in pyproject.toml.
"""

from setuptools import find_namespace_packages, setup

# What engine/resources.py and the app read at run time; bench trials and other files in resources/ stay out.
RESOURCE_FILES = [
    "static/model.npz",
    "static/PROVENANCE.json",
    "static/neighbours.npz",
    "minilm/model.int8.onnx",
    "minilm/tokenizer.json",
    "minilm/PROVENANCE.json",
    "minilm/README.md",
    "neural/head.npz",
    "neural/PROVENANCE.json",
    "calibration/*.json",
    "confidence/*.json",
    "icons/*.svg",
    "icons/*.png",
    "quire.desktop",
]

setup(
    packages=[*find_namespace_packages(include=["engine*", "app*"]), "engine._resources"],
    package_dir={"engine._resources": "resources"},
    package_data={"engine._resources": RESOURCE_FILES},
)
