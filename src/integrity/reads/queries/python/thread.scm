; The current thread's name or identity.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved); `*x` is any path ending in `x`.

([(identifier) (attribute) (subscript) (call)] @read
  (#reads? @read
    "threading.current_thread().name"
    "threading.currentThread().name"
    "threading.current_thread().getName"
    "threading.currentThread().getName"
    "threading.current_thread().ident"
    "threading.get_ident"
    "threading.get_native_id"
    "threading.main_thread"
    "_thread.get_ident"))
