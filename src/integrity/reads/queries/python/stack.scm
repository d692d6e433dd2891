; The call stack: frames, tracebacks, backtraces, the caller's location.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved); `*x` is any path ending in `x`.

([(identifier) (attribute) (subscript) (call)] @read
  (#reads? @read
    "sys._getframe"
    "sys._current_frames"
    "inspect.stack"
    "inspect.currentframe"
    "inspect.getouterframes"
    "inspect.getinnerframes"
    "inspect.trace"
    "inspect.getframeinfo"
    "traceback.extract_stack"
    "traceback.format_stack"
    "traceback.print_stack"
    "traceback.walk_stack"
    "traceback.StackSummary.extract"
    "*.f_back"
    "*.tb_frame"
    "*.tb_next"
    "*.__traceback__"
    "sys.exc_info"
    "sys.last_traceback"
    "traceback.format_exc"
    "traceback.print_exc"
    "traceback.format_exception"
    "traceback.print_exception"
    "traceback.extract_tb"
    "traceback.format_tb"
    "traceback.print_tb"
    "traceback.walk_tb"
    "traceback.TracebackException"))
