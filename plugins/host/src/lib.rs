//! swex-plugin-host: discovers and loads explorer plugins and serves them the engine.
