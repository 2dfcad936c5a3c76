"""quire's desktop app (PySide6): a window over :class:`engine.Index`; workers own the engine, widgets only draw."""
