; Code evaluated at run time: the language has no `eval`; nothing to match.
