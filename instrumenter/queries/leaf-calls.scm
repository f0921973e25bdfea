; What decides whether a body's call tree can be summarised (leaf-calls.ts):
; the function of every call (a plain name, or anything else: a call through
; a pointer), inline assembly, and GNU nested functions.
(call_expression
  function: (_) @callee)
(gnu_asm_expression) @asm
(function_definition) @nested
(array_declarator
  size: (_) @array_size)
(parameter_list) @parameters
