; Code evaluated at run time: its text can hold any read, out of the syntax tree's sight.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved).

((call function: (_) @read)
  (#reads? @read
    "eval"
    "exec"
    "compile"
    "builtins.eval"
    "builtins.exec"
    "builtins.compile"))

; A module imported by a name that is not a constant: any module, any read.
((call function: (_) @read)
  (#reads? @read
    "__import__"
    "builtins.__import__"
    "importlib.import_module"
    "importlib.__import__")
  (#dynamic-argument? @read))
