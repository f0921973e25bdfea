; A call whose function is a plain identifier. Run at each allocator or
; setjmp name inside an instrumented function; the callee must be the name
; found there. Calls through members (p->malloc(n)) or parenthesised names
; ((malloc)(n)) do not match, nor does a bare name used as a value.
(call_expression
  function: (identifier) @callee
  arguments: (argument_list) @arguments) @call
