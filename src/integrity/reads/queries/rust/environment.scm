; The process's environment variables.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved); `*x` is any path ending in `x`.

([(identifier) (scoped_identifier) (field_expression) (call_expression)] @read
  (#reads? @read
    "std.env.var"
    "std.env.vars"
    "std.env.var_os"
    "std.env.vars_os"
    "std.env.set_var"
    "std.env.remove_var"))
