"""Editor support that needs no server: the Pygments lexer and HTML highlighting of excerpts."""
