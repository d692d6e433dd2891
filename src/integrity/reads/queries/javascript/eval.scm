; Code evaluated at run time: its text can hold any read, out of the syntax tree's sight.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved).

((call_expression function: (_) @read)
  (#reads? @read
    "eval"
    "Function"
    "vm.runInThisContext"
    "vm.runInNewContext"
    "vm.runInContext"
    "vm.compileFunction"))

((new_expression constructor: (_) @read)
  (#reads? @read
    "Function"
    "vm.Script"))
