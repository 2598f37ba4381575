/* sot._eval_frame: the PEP 523 frame-evaluation hook of sot, for CPython 3.11, 3.12 and 3.13.
 *
 * Interface (the Python face is sot/hook/eval_frame.py, which documents it for users):
 *   set_eval_frame(callback_or_None) -> previous   thread-local callback
 *   CallWithCallback(fn, callback)                  fn's calls run with callback set (to_static)
 *   add_disable_depth(delta) -> depth               thread-local "hook off" depth (sot.disable)
 *   CustomCode(code, disable_eval_frame=False)      what a callback or a cache lookup returns
 *   skip_code(code)                                 never hand frames of `code` to the hook
 *   set_code_cache(code, cache_or_None), get_code_cache(code)
 *                                                   per-code cache, kept in co_extra
 *   CacheBase                                       C base of a cache whose hits need no Python
 *                                                   frame but its guard function's (CodeCache)
 *   counters() -> dict                              process-wide event counts
 *
 * How a hooked frame runs. CPython pushes the frame of a Python call and binds its arguments
 * before it calls the hook, so the frame is "unstarted": only its argument slots are filled.
 * The hook wraps it in an InterpreterFrame view (f_code, f_locals, f_globals, f_builtins; no
 * real frame object, which CPython forbids for frames that have not reached RESUME) and asks
 * the code's cache, then the callback, what to run. To run other code it swaps the frame's code
 * object in place (same argument layout, so the argument slots stay valid), grows the frame on
 * the thread's data stack when there is room, and lets _PyEval_EvalFrameDefault run it: CPython
 * then clears and pops the frame exactly as it would the original. When the data-stack chunk has
 * no room to grow the frame, the code runs in a new frame of its own with the same arguments
 * bound again (PyEval_EvalCodeEx), and the unstarted frame is released.
 *
 * Who clears a frame differs: on 3.11 the caller (_PyEval_Vector) clears and pops it after the
 * hook returns; on 3.12+ the evaluator must, so a frame the hook does not evaluate is released
 * here (release_unstarted). Every `#if PY_VERSION_HEX` of sot lives in this file.
 *
 * The cache-hit path is the one that counts (a graph break pays it twice a call: the frame and
 * its resume function): a CacheBase is asked in C, which calls its generated guard function
 * with the frame's namespaces and, on a hit of the entry hit last, counts the hit and takes its
 * code without another Python frame (no lookup method); its f_locals is the frame view, read by
 * name from the frame, so a hit builds no dict. The view is a spare one, reused while no Python
 * code kept it. `CallWithCallback` swaps the callback
 * in C around a vectorcall, and the code a hit runs (callees unhooked) runs with the hook
 * uninstalled when no other thread needs it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030E0000
#define SOT_HOOK_SUPPORTED 1
#define Py_BUILD_CORE
#include <internal/pycore_frame.h>
#if PY_VERSION_HEX >= 0x030D0000
#include <internal/pycore_ceval.h>
#endif
#undef Py_BUILD_CORE
#else
#define SOT_HOOK_SUPPORTED 0
#endif

#if PY_VERSION_HEX >= 0x030C0000
#define CODE_GET_EXTRA PyUnstable_Code_GetExtra
#define CODE_SET_EXTRA PyUnstable_Code_SetExtra
#define REQUEST_CODE_EXTRA_INDEX PyUnstable_Eval_RequestCodeExtraIndex
#else
#define CODE_GET_EXTRA _PyCode_GetExtra
#define CODE_SET_EXTRA _PyCode_SetExtra
#define REQUEST_CODE_EXTRA_INDEX _PyEval_RequestCodeExtraIndex
#endif

#if SOT_HOOK_SUPPORTED

/* ------------------------------------------------------------------ module state */

static Py_ssize_t extra_index = -1; /* our co_extra slot: NULL, skip_marker or a cache */
static PyObject *skip_marker;       /* co_extra value of a skipped code object */
static PyObject *str_lookup;        /* interned "lookup" */
static PyObject *str_hits;          /* interned "hits" */
static PyObject *str_lookup_slow;   /* interned "_lookup_slow" */

static struct {
    unsigned long long callback_calls, cache_lookups, cache_hits, relocated_runs, suspended_runs, foreign_runs;
} counts;

/* ------------------------------------------------------------------ CustomCode */

typedef struct {
    PyObject_HEAD
    PyObject *code; /* a code object, or None: run the frame's own code */
    char disable_eval_frame;
} CustomCode;

static PyObject *
CustomCode_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"code", "disable_eval_frame", NULL};
    PyObject *code;
    int disable = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|p:CustomCode", kwlist, &code, &disable)) {
        return NULL;
    }
    if (code != Py_None && !PyCode_Check(code)) {
        return PyErr_Format(PyExc_TypeError, "CustomCode: code must be a code object or None, not %.200s",
                            Py_TYPE(code)->tp_name);
    }
    CustomCode *self = (CustomCode *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->code = Py_NewRef(code);
    self->disable_eval_frame = (char)disable;
    return (PyObject *)self;
}

static void
CustomCode_dealloc(CustomCode *self)
{
    Py_DECREF(self->code);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
CustomCode_repr(CustomCode *self)
{
    return PyUnicode_FromFormat("CustomCode(%R, disable_eval_frame=%s)", self->code,
                                self->disable_eval_frame ? "True" : "False");
}

static PyObject *
CustomCode_get_code(CustomCode *self, void *closure)
{
    return Py_NewRef(self->code);
}

static PyObject *
CustomCode_get_disable(CustomCode *self, void *closure)
{
    return PyBool_FromLong(self->disable_eval_frame);
}

static PyGetSetDef CustomCode_getset[] = {
    {"code", (getter)CustomCode_get_code, NULL, "the code to run, or None for the frame's own", NULL},
    {"disable_eval_frame", (getter)CustomCode_get_disable, NULL,
     "whether frames called by that code run with the hook off", NULL},
    {NULL},
};

static PyTypeObject CustomCode_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sot._eval_frame.CustomCode",
    .tp_basicsize = sizeof(CustomCode),
    .tp_dealloc = (destructor)CustomCode_dealloc,
    .tp_repr = (reprfunc)CustomCode_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = PyDoc_STR("CustomCode(code, disable_eval_frame=False): what a hooked frame runs."),
    .tp_getset = CustomCode_getset,
    .tp_new = CustomCode_new,
};

/* ------------------------------------------------------------------ per-code extra */

static PyTypeObject CacheBase_Type; /* a cache the hook asks in C (below) */

static void
free_extra(void *extra)
{
    Py_XDECREF((PyObject *)extra);
}

static int
check_code(PyObject *code)
{
    if (!PyCode_Check(code)) {
        PyErr_Format(PyExc_TypeError, "expected a code object, not %.200s", Py_TYPE(code)->tp_name);
        return -1;
    }
    return 0;
}

/* Stores `value` (a new reference is taken; NULL clears) in the code's slot. */
static int
store_extra(PyObject *code, PyObject *value)
{
    Py_XINCREF(value);
    /* CPython frees the previous value with free_extra. */
    if (CODE_SET_EXTRA(code, extra_index, value) < 0) {
        Py_XDECREF(value);
        return -1;
    }
    return 0;
}

static PyObject *
skip_code(PyObject *module, PyObject *code)
{
    if (check_code(code) < 0 || store_extra(code, skip_marker) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
set_code_cache(PyObject *module, PyObject *args)
{
    PyObject *code, *cache;
    if (!PyArg_ParseTuple(args, "OO:set_code_cache", &code, &cache) || check_code(code) < 0) {
        return NULL;
    }
    if (cache != Py_None && !PyObject_TypeCheck(cache, &CacheBase_Type) && !PyObject_HasAttr(cache, str_lookup)) {
        return PyErr_Format(PyExc_TypeError, "a code cache needs a lookup(frame) method; %.200s has none",
                            Py_TYPE(cache)->tp_name);
    }
    if (store_extra(code, cache == Py_None ? NULL : cache) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
get_code_cache(PyObject *module, PyObject *code)
{
    void *extra = NULL;
    if (check_code(code) < 0 || CODE_GET_EXTRA(code, extra_index, &extra) < 0) {
        return NULL;
    }
    if (extra == NULL || extra == skip_marker) {
        Py_RETURN_NONE;
    }
    return Py_NewRef((PyObject *)extra);
}

static PyObject *
counters(PyObject *module, PyObject *unused)
{
    return Py_BuildValue("{sKsKsKsKsKsK}", "callback_calls", counts.callback_calls, "cache_lookups",
                         counts.cache_lookups, "cache_hits", counts.cache_hits, "relocated_runs",
                         counts.relocated_runs, "suspended_runs", counts.suspended_runs, "foreign_runs",
                         counts.foreign_runs);
}

/* ------------------------------------------------------------------ frame access per version */

#if PY_VERSION_HEX >= 0x030D0000
#define FRAME_CODE(f) ((PyCodeObject *)(f)->f_executable)
#define FRAME_FUNC(f) ((PyFunctionObject *)(f)->f_funcobj)
#define FRAME_SIZE(co) ((co)->co_framesize)
static inline void
frame_set_code(_PyInterpreterFrame *frame, PyCodeObject *code)
{
    Py_SETREF(frame->f_executable, Py_NewRef((PyObject *)code));
    frame->instr_ptr = _PyCode_CODE(code);
}
#elif PY_VERSION_HEX >= 0x030C0000
#define FRAME_CODE(f) ((f)->f_code)
#define FRAME_FUNC(f) ((PyFunctionObject *)(f)->f_funcobj)
#define FRAME_SIZE(co) ((co)->co_framesize)
static inline void
frame_set_code(_PyInterpreterFrame *frame, PyCodeObject *code)
{
    Py_SETREF(frame->f_code, (PyCodeObject *)Py_NewRef((PyObject *)code));
    frame->prev_instr = _PyCode_CODE(code) - 1;
}
#else
#define FRAME_CODE(f) ((f)->f_code)
#define FRAME_FUNC(f) ((f)->f_func)
/* 3.11 has no co_framesize; this is the size _PyEvalFramePushAndInit pushes. */
#define FRAME_SIZE(co) ((co)->co_nlocalsplus + (co)->co_stacksize + (int)FRAME_SPECIALS_SIZE)
static inline void
frame_set_code(_PyInterpreterFrame *frame, PyCodeObject *code)
{
    Py_SETREF(frame->f_code, (PyCodeObject *)Py_NewRef((PyObject *)code));
    frame->prev_instr = _PyCode_CODE(code) - 1;
}
#endif

/* Per thread: the callback (strong; NULL when unset), a depth > 0 while the hook is off for the
 * frames below (during the callback, a lookup, or code run with disable_eval_frame), the depth
 * of sot.disable() blocks (user_off: CallWithCallback calls its function plainly), and the code
 * object whose next frame must run untouched (the relocated run of that code). */
typedef struct {
    PyObject *callback;
    int disabled;
    int user_off;
    PyObject *passthrough;
} ThreadHook;
static _Thread_local ThreadHook hook;

/* Threads with a callback set; the hook is installed in the interpreter while this is > 0 and
 * no run suspended it. A thread that exits with a callback still set keeps it counted (other
 * threads see no callback). */
static Py_ssize_t threads_with_callback;

/* Whether a run of code with the hook off for its callees uninstalled the hook (suspend_hook). */
static int hook_suspended;

static PyObject *sot_eval_frame(PyThreadState *tstate, _PyInterpreterFrame *frame, int throw_flag);

/* Whether another PEP 523 evaluator (another JIT's, a profiler's) is installed: sot cannot hook
 * frames then, and its wrappers run their functions as eager code runs them. */
static int
foreign_evaluator(void)
{
    _PyFrameEvalFunction current = _PyInterpreterState_GetEvalFrameFunc(PyInterpreterState_Get());
    return current != _PyEval_EvalFrameDefault && current != sot_eval_frame;
}

/* A stand-in for another JIT's evaluator, for tests of the fallback above: it evaluates as CPython does. */
static PyObject *
foreign_eval_frame(PyThreadState *tstate, _PyInterpreterFrame *frame, int throw_flag)
{
    return _PyEval_EvalFrameDefault(tstate, frame, throw_flag);
}

static PyObject *
set_foreign_evaluator_for_testing(PyObject *module, PyObject *on)
{
    int install = PyObject_IsTrue(on);
    if (install < 0) {
        return NULL;
    }
    _PyInterpreterState_SetEvalFrameFunc(PyInterpreterState_Get(),
                                         install ? foreign_eval_frame : _PyEval_EvalFrameDefault);
    Py_RETURN_NONE;
}

static int
install_hook(int on)
{
    PyInterpreterState *interp = PyInterpreterState_Get();
    _PyFrameEvalFunction current = _PyInterpreterState_GetEvalFrameFunc(interp);
    if (current != _PyEval_EvalFrameDefault && current != sot_eval_frame) {
        PyErr_SetString(PyExc_RuntimeError,
                        "another PEP 523 frame evaluator is installed; sot cannot hook frames");
        return -1;
    }
    _PyInterpreterState_SetEvalFrameFunc(interp, on ? sot_eval_frame : _PyEval_EvalFrameDefault);
    return 0;
}

/* CPython inlines Python-to-Python calls only while no evaluator is installed, so code whose
 * callees run with the hook off (a cache hit's runner, an eager fallback) runs faster with the
 * hook uninstalled. That is safe while this thread is the only one with a callback: its callees
 * are not handed over anyway, and a thread that sets a callback meanwhile installs the hook
 * again (swap_callback). Returns whether it uninstalled the hook; resume_hook undoes it. */
static int
suspend_hook(void)
{
    if (hook_suspended || threads_with_callback != 1 || hook.callback == NULL) {
        return 0;
    }
    if (install_hook(0) < 0) { /* cannot happen while sot_eval_frame runs: it is installed */
        PyErr_Clear();
        return 0;
    }
    hook_suspended = 1;
    counts.suspended_runs++;
    return 1;
}

static int
resume_hook(int suspended)
{
    if (!suspended || !hook_suspended) { /* not ours, or another thread installed it meanwhile */
        return 0;
    }
    hook_suspended = 0;
    return threads_with_callback > 0 ? install_hook(1) : 0;
}

#define UNHOOKED_FLAGS (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE)

static inline int
total_args(PyCodeObject *co)
{
    return co->co_argcount + co->co_kwonlyargcount + !!(co->co_flags & CO_VARARGS) +
           !!(co->co_flags & CO_VARKEYWORDS);
}

static PyObject *
closure_of(_PyInterpreterFrame *frame)
{
    PyFunctionObject *func = FRAME_FUNC(frame);
    return (func != NULL && PyFunction_Check(func)) ? func->func_closure : NULL;
}

#if PY_VERSION_HEX >= 0x030C0000 && PY_VERSION_HEX < 0x030D0000
/* 3.12 keeps these static; they mirror Python/pystate.c and Python/frame.c for a frame that
 * was never linked into the frame chain (so it has no frame object). */
static void
pop_frame(PyThreadState *tstate, _PyInterpreterFrame *frame)
{
    PyObject **base = (PyObject **)frame;
    if (base == &tstate->datastack_chunk->data[0]) {
        _PyStackChunk *chunk = tstate->datastack_chunk;
        _PyStackChunk *previous = chunk->previous;
        PyObjectArenaAllocator arena;
        tstate->datastack_top = &previous->data[previous->top];
        tstate->datastack_chunk = previous;
        PyObject_GetArenaAllocator(&arena);
        arena.free(arena.ctx, chunk, chunk->size);
        tstate->datastack_limit = (PyObject **)(((char *)previous) + previous->size);
    }
    else {
        tstate->datastack_top = base;
    }
}

static void
clear_and_pop(PyThreadState *tstate, _PyInterpreterFrame *frame)
{
    for (int i = 0; i < frame->stacktop; i++) {
        Py_XDECREF(frame->localsplus[i]);
    }
    frame->stacktop = 0;
    Py_XDECREF(frame->f_locals);
    Py_DECREF(frame->f_funcobj);
    Py_DECREF(frame->f_code);
    pop_frame(tstate, frame);
}
#endif

/* Releases a frame that the hook does not evaluate (its evaluator's duty on 3.12+). */
static void
release_unstarted(PyThreadState *tstate, _PyInterpreterFrame *frame)
{
#if PY_VERSION_HEX >= 0x030D0000
    _PyEval_FrameClearAndPop(tstate, frame);
#elif PY_VERSION_HEX >= 0x030C0000
    clear_and_pop(tstate, frame);
#else
    (void)tstate;
    (void)frame; /* _PyEval_Vector clears and pops it */
#endif
}

/* ------------------------------------------------------------------ InterpreterFrame view */

typedef struct {
    PyObject_HEAD
    _PyInterpreterFrame *frame; /* valid only while the hook holds the view */
    PyObject *code, *globals, *builtins;
    PyObject *locals; /* built on first use */
} FrameView;

static PyTypeObject FrameView_Type;

/* f_locals of an unstarted frame: its arguments and the values of its free variables (what
 * frame.f_locals shows at the first line); for module and class bodies, their namespace. */
static PyObject *
build_locals(_PyInterpreterFrame *frame)
{
    PyCodeObject *co = FRAME_CODE(frame);
    if (!(co->co_flags & CO_OPTIMIZED)) {
        return frame->f_locals != NULL ? Py_NewRef(frame->f_locals) : PyDict_New();
    }
    PyObject *locals = PyDict_New();
    if (locals == NULL) {
        return NULL;
    }
    PyObject *names = co->co_localsplusnames;
    int nargs = total_args(co);
    for (int i = 0; i < nargs; i++) {
        PyObject *value = frame->localsplus[i];
        if (value != NULL && PyDict_SetItem(locals, PyTuple_GET_ITEM(names, i), value) < 0) {
            goto error;
        }
    }
    PyObject *closure = closure_of(frame);
    int first_free = co->co_nlocalsplus - co->co_nfreevars;
    for (int j = 0; closure != NULL && j < co->co_nfreevars; j++) {
        PyObject *value = PyCell_GET(PyTuple_GET_ITEM(closure, j));
        if (value != NULL &&
            PyDict_SetItem(locals, PyTuple_GET_ITEM(names, first_free + j), value) < 0) {
            goto error;
        }
    }
    return locals;
error:
    Py_DECREF(locals);
    return NULL;
}

static int FrameView_clear(FrameView *self);

/* A released view that no Python code kept, emptied, for the next lookup (NULL: none). One for
 * the process: the GIL serialises view_new and view_release, which call no Python code. */
static FrameView *spare_view;

static FrameView *
view_new(_PyInterpreterFrame *frame, PyCodeObject *code)
{
    FrameView *view = spare_view;
    if (view != NULL) {
        spare_view = NULL;
    }
    else {
        view = PyObject_GC_New(FrameView, &FrameView_Type);
        if (view == NULL) {
            return NULL;
        }
        view->code = view->globals = view->builtins = view->locals = NULL;
        PyObject_GC_Track(view);
    }
    view->frame = frame;
    view->code = Py_NewRef((PyObject *)code);
    view->globals = Py_NewRef(frame->f_globals);
    view->builtins = Py_NewRef(frame->f_builtins);
    return view;
}

/* Ends the view's access to the frame; a view kept by Python code keeps a snapshot of locals,
 * one nobody kept becomes the spare. */
static void
view_release(FrameView *view)
{
    if (Py_REFCNT(view) == 1 && spare_view == NULL) {
        view->frame = NULL;
        FrameView_clear(view); /* the frame holds what these hold: no deallocation runs Python code */
        spare_view = view;
        return;
    }
    if (Py_REFCNT(view) > 1 && view->locals == NULL) {
        view->locals = build_locals(view->frame);
        if (view->locals == NULL) {
            PyErr_Clear(); /* f_locals then raises RuntimeError */
        }
    }
    view->frame = NULL;
    Py_DECREF(view);
}

static PyObject *
FrameView_get_locals(FrameView *self, void *closure)
{
    if (self->locals == NULL) {
        if (self->frame == NULL) {
            PyErr_SetString(PyExc_RuntimeError, "the locals of this frame are gone");
            return NULL;
        }
        self->locals = build_locals(self->frame);
        if (self->locals == NULL) {
            return NULL;
        }
    }
    return Py_NewRef(self->locals);
}

static PyObject *
FrameView_get_code(FrameView *self, void *closure)
{
    return Py_NewRef(self->code);
}

static PyObject *
FrameView_get_globals(FrameView *self, void *closure)
{
    return Py_NewRef(self->globals);
}

static PyObject *
FrameView_get_builtins(FrameView *self, void *closure)
{
    return Py_NewRef(self->builtins);
}

/* The cells of the frame's free variables (its function's __closure__; an empty tuple if none): the
 * translation tells one cell from another by identity, as closures sharing a cell do. */
static PyObject *
FrameView_get_closure(FrameView *self, void *closure)
{
    if (self->frame == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the closure of this frame is gone");
        return NULL;
    }
    PyObject *func = (PyObject *)FRAME_FUNC(self->frame);
    PyObject *cells = func != NULL && PyFunction_Check(func) ? ((PyFunctionObject *)func)->func_closure : NULL;
    return cells != NULL ? Py_NewRef(cells) : PyTuple_New(0);
}

static PyObject *
FrameView_repr(FrameView *self)
{
    PyCodeObject *co = (PyCodeObject *)self->code;
    return PyUnicode_FromFormat("<InterpreterFrame of %U, file %R, line %d>", co->co_qualname,
                                co->co_filename, co->co_firstlineno);
}

static int
FrameView_traverse(FrameView *self, visitproc visit, void *arg)
{
    Py_VISIT(self->code);
    Py_VISIT(self->globals);
    Py_VISIT(self->builtins);
    Py_VISIT(self->locals);
    return 0;
}

static int
FrameView_clear(FrameView *self)
{
    Py_CLEAR(self->code);
    Py_CLEAR(self->globals);
    Py_CLEAR(self->builtins);
    Py_CLEAR(self->locals);
    return 0;
}

static void
FrameView_dealloc(FrameView *self)
{
    PyObject_GC_UnTrack(self);
    FrameView_clear(self);
    PyObject_GC_Del(self);
}

/* view[name]: the value of an argument or free variable of the frame (KeyError if unbound), read
 * from the frame itself while the hook holds the view (a lookup needs no dict), from the snapshot
 * after; a module or class body's namespace. What a CacheBase's check gets as f_locals. */
static PyObject *
FrameView_subscript(FrameView *self, PyObject *key)
{
    if (self->locals != NULL || self->frame == NULL) {
        if (self->locals == NULL) {
            PyErr_SetString(PyExc_RuntimeError, "the locals of this frame are gone");
            return NULL;
        }
        return PyObject_GetItem(self->locals, key);
    }
    _PyInterpreterFrame *frame = self->frame;
    PyCodeObject *co = FRAME_CODE(frame);
    if (!(co->co_flags & CO_OPTIMIZED)) {
        if (frame->f_locals == NULL) {
            PyErr_SetObject(PyExc_KeyError, key);
            return NULL;
        }
        return PyObject_GetItem(frame->f_locals, key);
    }
    PyObject *names = co->co_localsplusnames, *value = NULL;
    int nargs = total_args(co), first_free = co->co_nlocalsplus - co->co_nfreevars, found = 0;
    for (int i = 0; i < nargs && !found; i++) {
        if (PyTuple_GET_ITEM(names, i) == key) {
            value = frame->localsplus[i];
            found = 1;
        }
    }
    PyObject *closure = closure_of(frame);
    for (int j = 0; !found && closure != NULL && j < co->co_nfreevars; j++) {
        if (PyTuple_GET_ITEM(names, first_free + j) == key) {
            value = PyCell_GET(PyTuple_GET_ITEM(closure, j));
            found = 1;
        }
    }
    if (!found && PyUnicode_Check(key)) { /* an equal string that is not the interned name */
        for (int i = 0; i < nargs && !found; i++) {
            if (PyUnicode_Compare(PyTuple_GET_ITEM(names, i), key) == 0) {
                value = frame->localsplus[i];
                found = 1;
            }
        }
        for (int j = 0; !found && closure != NULL && j < co->co_nfreevars; j++) {
            if (PyUnicode_Compare(PyTuple_GET_ITEM(names, first_free + j), key) == 0) {
                value = PyCell_GET(PyTuple_GET_ITEM(closure, j));
                found = 1;
            }
        }
    }
    if (value == NULL) {
        PyErr_SetObject(PyExc_KeyError, key);
        return NULL;
    }
    return Py_NewRef(value);
}

static PyMappingMethods FrameView_mapping = {
    .mp_subscript = (binaryfunc)FrameView_subscript,
};

static PyGetSetDef FrameView_getset[] = {
    {"f_code", (getter)FrameView_get_code, NULL, "the code object of the frame", NULL},
    {"f_locals", (getter)FrameView_get_locals, NULL,
     "arguments and free variables at the frame's start (a snapshot dict)", NULL},
    {"f_globals", (getter)FrameView_get_globals, NULL, "the frame's globals", NULL},
    {"f_builtins", (getter)FrameView_get_builtins, NULL, "the frame's builtins", NULL},
    {"f_closure", (getter)FrameView_get_closure, NULL, "the cells of the frame's free variables", NULL},
    {NULL},
};

static PyTypeObject FrameView_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sot._eval_frame.InterpreterFrame",
    .tp_basicsize = sizeof(FrameView),
    .tp_dealloc = (destructor)FrameView_dealloc,
    .tp_repr = (reprfunc)FrameView_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = PyDoc_STR("The frame handed to the eval-frame callback and to cache lookups."),
    .tp_traverse = (traverseproc)FrameView_traverse,
    .tp_clear = (inquiry)FrameView_clear,
    .tp_getset = FrameView_getset,
    .tp_as_mapping = &FrameView_mapping,
};

/* ------------------------------------------------------------------ running other code */

static int
same_name(PyObject *a, PyObject *b)
{
    return a == b || PyUnicode_Compare(a, b) == 0;
}

/* Other code may run in a frame only if it reads the same argument slots and closure. */
static int
check_layout(PyCodeObject *old, PyCodeObject *new)
{
    const int argflags = CO_VARARGS | CO_VARKEYWORDS;
    const char *why = NULL;
    if (new->co_flags & UNHOOKED_FLAGS) {
        why = "it is a generator or coroutine";
    }
    else if (new->co_argcount != old->co_argcount ||
             new->co_posonlyargcount != old->co_posonlyargcount ||
             new->co_kwonlyargcount != old->co_kwonlyargcount ||
             (new->co_flags & argflags) != (old->co_flags & argflags)) {
        why = "its arguments differ";
    }
    else if (new->co_nfreevars != old->co_nfreevars) {
        why = "its free variables differ";
    }
    else {
        int nfree = old->co_nfreevars;
        for (int j = 1; j <= nfree && why == NULL; j++) {
            if (!same_name(PyTuple_GET_ITEM(new->co_localsplusnames, new->co_nlocalsplus - j),
                           PyTuple_GET_ITEM(old->co_localsplusnames, old->co_nlocalsplus - j))) {
                why = "its free variables differ";
            }
        }
    }
    if (why != NULL) {
        PyErr_Format(PyExc_TypeError, "cannot run %R in place of %R: %s", new, old, why);
        return -1;
    }
    return 0;
}

/* Swaps `code` into the frame if the frame (the top of the data stack) can grow to its size. */
static int
swap_in_place(PyThreadState *tstate, _PyInterpreterFrame *frame, PyCodeObject *code)
{
    PyCodeObject *old = FRAME_CODE(frame);
    PyObject **base = (PyObject **)frame;
    if (base + FRAME_SIZE(old) != tstate->datastack_top ||
        FRAME_SIZE(code) >= tstate->datastack_limit - base) {
        return 0;
    }
    tstate->datastack_top = base + FRAME_SIZE(code);
    /* An unstarted frame holds only its arguments; the other slots of `code` start empty. */
    for (int i = total_args(old); i < code->co_nlocalsplus; i++) {
        frame->localsplus[i] = NULL;
    }
    frame->stacktop = code->co_nlocalsplus;
    frame_set_code(frame, code);
    return 1;
}

/* Runs `code` in a new frame with the frame's arguments bound again, as a call would. */
static PyObject *
run_relocated(_PyInterpreterFrame *frame, PyCodeObject *code)
{
    PyCodeObject *old = FRAME_CODE(frame);
    PyObject **slots = frame->localsplus;
    int npos = old->co_argcount, nkwonly = old->co_kwonlyargcount, next = npos + nkwonly;
    PyObject *varargs = (old->co_flags & CO_VARARGS) ? slots[next++] : NULL;
    PyObject *varkw = (old->co_flags & CO_VARKEYWORDS) ? slots[next++] : NULL;
    Py_ssize_t nvar = varargs != NULL ? PyTuple_GET_SIZE(varargs) : 0;
    Py_ssize_t nkw = nkwonly + (varkw != NULL ? PyDict_GET_SIZE(varkw) : 0);
    PyObject **args = PyMem_Malloc(sizeof(PyObject *) * (npos + nvar + 2 * nkw + 1));
    if (args == NULL) {
        return PyErr_NoMemory();
    }
    PyObject **kws = args + npos + nvar;
    for (int i = 0; i < npos; i++) {
        args[i] = slots[i];
    }
    for (Py_ssize_t i = 0; i < nvar; i++) {
        args[npos + i] = PyTuple_GET_ITEM(varargs, i);
    }
    for (int i = 0; i < nkwonly; i++) {
        kws[2 * i] = PyTuple_GET_ITEM(old->co_localsplusnames, npos + i);
        kws[2 * i + 1] = slots[npos + i];
    }
    Py_ssize_t pos = 0, k = nkwonly;
    PyObject *key, *value;
    while (varkw != NULL && PyDict_Next(varkw, &pos, &key, &value)) {
        kws[2 * k] = key;
        kws[2 * k + 1] = value;
        k++;
    }
    counts.relocated_runs++;
    hook.passthrough = (PyObject *)code;
    PyObject *result =
        PyEval_EvalCodeEx((PyObject *)code, frame->f_globals, frame->f_locals, args,
                          (int)(npos + nvar), kws, (int)nkw, NULL, 0, NULL, closure_of(frame));
    hook.passthrough = NULL;
    PyMem_Free(args);
    return result;
}

/* Runs `code` (NULL: the frame's own) for the frame; callees run unhooked if `disable`. */
static PyObject *
run_frame(PyThreadState *tstate, _PyInterpreterFrame *frame, PyCodeObject *code, int disable)
{
    if (code != NULL && check_layout(FRAME_CODE(frame), code) < 0) {
        release_unstarted(tstate, frame);
        return NULL;
    }
    PyObject *result;
    hook.disabled += disable;
    int suspended = disable && suspend_hook();
    if (code == NULL || swap_in_place(tstate, frame, code)) {
        result = _PyEval_EvalFrameDefault(tstate, frame, 0);
    }
    else {
        result = run_relocated(frame, code);
        release_unstarted(tstate, frame);
    }
    if (resume_hook(suspended) < 0) {
        Py_CLEAR(result);
    }
    hook.disabled -= disable;
    return result;
}

/* Reads what a callback or lookup returned: 0 with *code (NULL: the frame's own) and *disable
 * set, 1 for None, -1 for an error. */
static int
read_choice(PyObject *choice, PyCodeObject **code, int *disable)
{
    *code = NULL;
    *disable = 0;
    if (choice == Py_None) {
        return 1;
    }
    if (PyCode_Check(choice)) {
        *code = (PyCodeObject *)choice;
        return 0;
    }
    if (Py_IS_TYPE(choice, &CustomCode_Type)) {
        CustomCode *custom = (CustomCode *)choice;
        *code = custom->code == Py_None ? NULL : (PyCodeObject *)custom->code;
        *disable = custom->disable_eval_frame;
        return 0;
    }
    PyErr_Format(PyExc_TypeError,
                 "the eval-frame callback and cache lookups return None, a code object or "
                 "CustomCode, not %.200s",
                 Py_TYPE(choice)->tp_name);
    return -1;
}

/* ------------------------------------------------------------------ CacheBase */

/* The C base of sot's CodeCache: the hit path of a lookup, run by the hook with no Python frame
 * but the generated guard function's. `_check(f_locals, f_globals, f_builtins)` returns the id of
 * the matching entry (or -1); a hit on the front entry (`_set_front`: the most recent hit) adds
 * one to `_front_entry.hits` and returns `_front_code`; any other result, and every lookup while
 * `_check` is None, goes to the subclass's `_lookup_slow(id)` (misses, the size limit, moving
 * another entry to the front), which returns what to run or None. */
typedef struct {
    PyObject_HEAD
    PyObject *check, *front_entry, *front_code;
    Py_ssize_t front_id;
} CacheBase;

static PyObject *
CacheBase_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    CacheBase *self = (CacheBase *)type->tp_alloc(type, 0);
    if (self != NULL) {
        self->front_id = -1;
    }
    return (PyObject *)self;
}

static int
CacheBase_traverse(CacheBase *self, visitproc visit, void *arg)
{
    Py_VISIT(self->check);
    Py_VISIT(self->front_entry);
    Py_VISIT(self->front_code);
    return 0;
}

static int
CacheBase_clear(CacheBase *self)
{
    Py_CLEAR(self->check);
    Py_CLEAR(self->front_entry);
    Py_CLEAR(self->front_code);
    return 0;
}

static void
CacheBase_dealloc(CacheBase *self)
{
    PyObject_GC_UnTrack(self);
    CacheBase_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* What to run for a frame with these namespaces: a code, a CustomCode, or None (a miss). */
static PyObject *
cache_lookup(CacheBase *self, PyObject *f_locals, PyObject *f_globals, PyObject *f_builtins)
{
    Py_ssize_t id = -1;
    if (self->check != NULL && self->check != Py_None) {
        PyObject *args[3] = {f_locals, f_globals, f_builtins};
        PyObject *check = Py_NewRef(self->check); /* the check may replace itself (an insert) */
        PyObject *found = PyObject_Vectorcall(check, args, 3, NULL);
        Py_DECREF(check);
        if (found == NULL) {
            return NULL;
        }
        id = PyLong_AsSsize_t(found);
        Py_DECREF(found);
        if (id == -1 && PyErr_Occurred()) {
            return NULL;
        }
        if (id >= 0 && id == self->front_id) { /* front_id >= 0: _set_front set the entry and code */
            PyObject *entry = Py_NewRef(self->front_entry), *code = Py_NewRef(self->front_code);
            PyObject *hits = PyObject_GetAttr(entry, str_hits), *more = NULL;
            if (hits != NULL) {
                Py_ssize_t n = PyLong_AsSsize_t(hits);
                Py_DECREF(hits);
                more = n == -1 && PyErr_Occurred() ? NULL : PyLong_FromSsize_t(n + 1);
            }
            int failed = more == NULL || PyObject_SetAttr(entry, str_hits, more) < 0;
            Py_XDECREF(more);
            Py_DECREF(entry);
            if (failed) {
                Py_DECREF(code);
                return NULL;
            }
            return code;
        }
    }
    PyObject *arg = PyLong_FromSsize_t(id);
    if (arg == NULL) {
        return NULL;
    }
    PyObject *choice = PyObject_CallMethodOneArg((PyObject *)self, str_lookup_slow, arg);
    Py_DECREF(arg);
    return choice;
}

static PyObject *
CacheBase_lookup_namespaces(CacheBase *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        return PyErr_Format(PyExc_TypeError, "_lookup_namespaces(f_locals, f_globals, f_builtins) takes 3 "
                            "arguments, got %zd", nargs);
    }
    return cache_lookup(self, args[0], args[1], args[2]);
}

/* Sets the front entry's id, the entry and its code together (no lookup sees a mix of two). */
static PyObject *
CacheBase_set_front(CacheBase *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        return PyErr_Format(PyExc_TypeError, "_set_front(id, entry, code) takes 3 arguments, got %zd", nargs);
    }
    Py_ssize_t id = PyLong_AsSsize_t(args[0]);
    if (id == -1 && PyErr_Occurred()) {
        return NULL;
    }
    PyObject *old_entry = self->front_entry, *old_code = self->front_code;
    self->front_id = id;
    self->front_entry = Py_NewRef(args[1]);
    self->front_code = Py_NewRef(args[2]);
    Py_XDECREF(old_entry);
    Py_XDECREF(old_code);
    Py_RETURN_NONE;
}

static PyMethodDef CacheBase_methods[] = {
    {"_lookup_namespaces", (PyCFunction)(void (*)(void))CacheBase_lookup_namespaces, METH_FASTCALL,
     "_lookup_namespaces(f_locals, f_globals, f_builtins): what the hook runs for a frame with these"},
    {"_set_front", (PyCFunction)(void (*)(void))CacheBase_set_front, METH_FASTCALL,
     "_set_front(id, entry, code): hits of entry `id` are served in C, counted on `entry`, running `code`"},
    {NULL},
};

static PyMemberDef CacheBase_members[] = {
    {"_check", T_OBJECT, offsetof(CacheBase, check), 0,
     "(f_locals, f_globals, f_builtins) -> entry id or -1; None sends every lookup to _lookup_slow"},
    {"_front_id", T_PYSSIZET, offsetof(CacheBase, front_id), READONLY, "the id of the entry served in C"},
    {"_front_entry", T_OBJECT, offsetof(CacheBase, front_entry), READONLY, "that entry (its hits are counted)"},
    {"_front_code", T_OBJECT, offsetof(CacheBase, front_code), READONLY, "what a hit on that entry runs"},
    {NULL},
};

static PyTypeObject CacheBase_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sot._eval_frame.CacheBase",
    .tp_basicsize = sizeof(CacheBase),
    .tp_dealloc = (destructor)CacheBase_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = PyDoc_STR("The C base of a code cache whose hits the hook serves without Python wrapper frames."),
    .tp_traverse = (traverseproc)CacheBase_traverse,
    .tp_clear = (inquiry)CacheBase_clear,
    .tp_methods = CacheBase_methods,
    .tp_members = CacheBase_members,
    .tp_new = CacheBase_new,
};

/* Asks the code's cache, then (on a miss) the callback, what to run; both run unhooked. A
 * CacheBase is asked in C, with the view as f_locals (read by name from the frame: no dict is
 * built for a hit); another cache through lookup(view). */
static PyObject *
ask(_PyInterpreterFrame *frame, PyCodeObject *code, PyObject *cache)
{
    FrameView *view = view_new(frame, code);
    if (view == NULL) {
        return NULL;
    }
    PyObject *choice = NULL;
    hook.disabled++;
    if (cache != NULL) {
        counts.cache_lookups++;
        Py_INCREF(cache);
        choice = PyObject_TypeCheck(cache, &CacheBase_Type)
                     ? cache_lookup((CacheBase *)cache, (PyObject *)view, frame->f_globals, frame->f_builtins)
                     : PyObject_CallMethodOneArg(cache, str_lookup, (PyObject *)view);
        Py_DECREF(cache);
        if (choice != Py_None) { /* a hit, or an error */
            counts.cache_hits += choice != NULL;
            goto done;
        }
        Py_CLEAR(choice);
    }
    PyObject *callback = Py_XNewRef(hook.callback);
    if (callback == NULL) { /* the lookup unset it */
        choice = Py_NewRef(Py_None);
    }
    else {
        counts.callback_calls++;
        choice = PyObject_CallOneArg(callback, (PyObject *)view);
        Py_DECREF(callback);
    }
done:
    view_release(view);
    hook.disabled--;
    return choice;
}

static PyObject *
hooked(PyThreadState *tstate, _PyInterpreterFrame *frame, PyCodeObject *code, PyObject *cache)
{
    PyObject *choice = ask(frame, code, cache);
    PyCodeObject *new_code;
    int disable;
    if (choice == NULL || read_choice(choice, &new_code, &disable) < 0) {
        Py_XDECREF(choice);
        release_unstarted(tstate, frame);
        return NULL;
    }
    PyObject *result = run_frame(tstate, frame, new_code, disable);
    Py_DECREF(choice);
    return result;
}

/* The PEP 523 entry point: every Python frame of the interpreter comes here while installed. */
static PyObject *
sot_eval_frame(PyThreadState *tstate, _PyInterpreterFrame *frame, int throw_flag)
{
    PyCodeObject *code = FRAME_CODE(frame);
    if (hook.passthrough != NULL && hook.passthrough == (PyObject *)code) {
        hook.passthrough = NULL;
        return _PyEval_EvalFrameDefault(tstate, frame, throw_flag);
    }
    if (hook.callback == NULL || hook.disabled || hook.user_off || throw_flag || (code->co_flags & UNHOOKED_FLAGS) ||
        PyErr_Occurred()) {
        return _PyEval_EvalFrameDefault(tstate, frame, throw_flag);
    }
    void *extra = NULL;
    if (CODE_GET_EXTRA((PyObject *)code, extra_index, &extra) < 0) {
        release_unstarted(tstate, frame);
        return NULL;
    }
    if (extra == skip_marker) {
        return _PyEval_EvalFrameDefault(tstate, frame, throw_flag);
    }
    return hooked(tstate, frame, code, (PyObject *)extra);
}

/* Makes `callback` (NULL: none; a new reference is taken) this thread's callback, installing
 * or removing the hook as the count of threads with one crosses zero; *previous receives the old
 * callback (the thread's reference passes to the caller; NULL: none). */
static int
swap_callback(PyObject *callback, PyObject **previous)
{
    PyObject *old = hook.callback;
    if (callback == NULL) {
        if (old != NULL && threads_with_callback == 1 && !hook_suspended && install_hook(0) < 0) {
            return -1;
        }
        threads_with_callback -= old != NULL;
    }
    else {
        if (old == NULL && (threads_with_callback == 0 || hook_suspended)) {
            if (install_hook(1) < 0) {
                return -1;
            }
            hook_suspended = 0;
        }
        threads_with_callback += old == NULL;
        Py_INCREF(callback);
    }
    hook.callback = callback;
    *previous = old;
    return 0;
}

static PyObject *
set_eval_frame(PyObject *module, PyObject *callback)
{
    if (callback != Py_None && !PyCallable_Check(callback)) {
        return PyErr_Format(PyExc_TypeError, "the eval-frame callback must be callable or None, not %.200s",
                            Py_TYPE(callback)->tp_name);
    }
    PyObject *previous;
    if (swap_callback(callback == Py_None ? NULL : callback, &previous) < 0) {
        return NULL;
    }
    return previous != NULL ? previous : Py_NewRef(Py_None);
}

static PyObject *
add_disable_depth(PyObject *module, PyObject *arg)
{
    long delta = PyLong_AsLong(arg);
    if (delta == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (delta < -1 || delta > 1 || hook.user_off + delta < 0) {
        return PyErr_Format(PyExc_ValueError,
                            "add_disable_depth: delta must be -1, 0 or 1 and the depth stay >= 0; "
                            "got %ld at depth %d", delta, hook.user_off);
    }
    hook.user_off += (int)delta;
    return PyLong_FromLong(hook.user_off);
}

/* ------------------------------------------------------------------ CallWithCallback */

/* A callable that calls `fn` with `callback` as this thread's callback for the duration of the
 * call (the previous one restored after it, also when it raises), or calls `fn` plainly while
 * the hook is off on this thread. It is to_static's wrapper: doing the swap in C around a
 * vectorcall costs a fraction of a Python wrapper with try/finally. Like a function, it binds
 * as a method, has a __dict__ (functools.wraps' metadata) and can be weakly referenced. */
typedef struct {
    PyObject_HEAD
    PyObject *fn, *callback;
    PyObject *dict, *weakrefs;
    vectorcallfunc vectorcall;
} CallWithCallback;

/* Installing the hook failed (its only failure: another PEP 523 evaluator, another JIT's, is
 * installed). Eager is always right: `fn` runs plainly, the first such run warns, each is counted.
 * Checked only when installing fails, so the cache-hit path pays nothing for it. */
static PyObject *
call_beside_foreign_evaluator(CallWithCallback *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (!foreign_evaluator()) {
        return NULL; /* another error: raised as it is */
    }
    PyErr_Clear();
    if (counts.foreign_runs++ == 0 &&
        PyErr_WarnEx(PyExc_RuntimeWarning,
                     "sot: another PEP 523 frame evaluator (another JIT's?) is installed: functions "
                     "decorated with sot.to_static run eagerly while it is (counted in "
                     "sot.hook.eval_frame.counters()['foreign_runs'])", 1) < 0) {
        return NULL;
    }
    return PyObject_Vectorcall(self->fn, args, nargsf, kwnames);
}

static PyObject *
CallWithCallback_vectorcall(CallWithCallback *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (self->fn == NULL) { /* cleared by the GC while it broke a cycle */
        PyErr_SetString(PyExc_RuntimeError, "CallWithCallback: called after it was cleared");
        return NULL;
    }
    if (hook.user_off) {
        return PyObject_Vectorcall(self->fn, args, nargsf, kwnames);
    }
    /* Called from code whose callees run unhooked (a graph break's code calling a resume
     * function): the hook is on again for this call, installed again if that run suspended it. */
    if (hook_suspended) {
        if (install_hook(1) < 0) {
            return call_beside_foreign_evaluator(self, args, nargsf, kwnames);
        }
        hook_suspended = 0;
    }
    int outer_disabled = hook.disabled;
    hook.disabled = 0;
    PyObject *previous, *ours;
    if (swap_callback(self->callback, &previous) < 0) {
        hook.disabled = outer_disabled;
        return call_beside_foreign_evaluator(self, args, nargsf, kwnames);
    }
    PyObject *result = PyObject_Vectorcall(self->fn, args, nargsf, kwnames);
    hook.disabled = outer_disabled;
    /* Restoring only fails if another evaluator was installed meanwhile; then the hook stays. */
    if (swap_callback(previous, &ours) < 0) {
        Py_CLEAR(result);
    }
    else {
        Py_XDECREF(ours);
    }
    Py_XDECREF(previous);
    return result;
}

static PyObject *
CallWithCallback_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"fn", "callback", NULL};
    PyObject *fn, *callback;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO:CallWithCallback", kwlist, &fn, &callback)) {
        return NULL;
    }
    if (!PyCallable_Check(fn) || !PyCallable_Check(callback)) {
        return PyErr_Format(PyExc_TypeError, "CallWithCallback: %s must be callable, not %.200s",
                            PyCallable_Check(fn) ? "callback" : "fn",
                            Py_TYPE(PyCallable_Check(fn) ? callback : fn)->tp_name);
    }
    CallWithCallback *self = (CallWithCallback *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->fn = Py_NewRef(fn);
    self->callback = Py_NewRef(callback);
    self->vectorcall = (vectorcallfunc)CallWithCallback_vectorcall;
    return (PyObject *)self;
}

static int
CallWithCallback_traverse(CallWithCallback *self, visitproc visit, void *arg)
{
    Py_VISIT(self->fn);
    Py_VISIT(self->callback);
    Py_VISIT(self->dict);
    return 0;
}

static int
CallWithCallback_clear(CallWithCallback *self)
{
    Py_CLEAR(self->fn);
    Py_CLEAR(self->callback);
    Py_CLEAR(self->dict);
    return 0;
}

static void
CallWithCallback_dealloc(CallWithCallback *self)
{
    PyObject_GC_UnTrack(self);
    if (self->weakrefs != NULL) {
        PyObject_ClearWeakRefs((PyObject *)self);
    }
    CallWithCallback_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Binds like a function: instance.attr is a bound method passing the instance first. */
static PyObject *
CallWithCallback_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        return Py_NewRef(self);
    }
    return PyMethod_New(self, obj);
}

/* Like a function: copy and deepcopy return it, pickle saves it by its module-level name. */
static PyObject *
CallWithCallback_reduce(CallWithCallback *self, PyObject *unused)
{
    PyObject *name = PyObject_GetAttrString((PyObject *)self, "__qualname__");
    if (name == NULL && self->fn != NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        name = PyObject_GetAttrString(self->fn, "__qualname__");
    }
    return name;
}

static PyMethodDef CallWithCallback_methods[] = {
    {"__reduce__", (PyCFunction)CallWithCallback_reduce, METH_NOARGS, "copied as itself, pickled by name"},
    {NULL},
};

static PyObject *
CallWithCallback_repr(CallWithCallback *self)
{
    return PyUnicode_FromFormat("<CallWithCallback of %R>", self->fn);
}

static PyMemberDef CallWithCallback_members[] = {
    {"fn", T_OBJECT_EX, offsetof(CallWithCallback, fn), READONLY, "the function called"},
    {"callback", T_OBJECT_EX, offsetof(CallWithCallback, callback), READONLY,
     "the eval-frame callback set during its calls"},
    {NULL},
};

static PyGetSetDef CallWithCallback_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, "attributes (functools.wraps' metadata)",
     NULL},
    {NULL},
};

static PyTypeObject CallWithCallback_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sot._eval_frame.CallWithCallback",
    .tp_basicsize = sizeof(CallWithCallback),
    .tp_dealloc = (destructor)CallWithCallback_dealloc,
    .tp_vectorcall_offset = offsetof(CallWithCallback, vectorcall),
    .tp_repr = (reprfunc)CallWithCallback_repr,
    .tp_call = PyVectorcall_Call,
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = PyDoc_STR("CallWithCallback(fn, callback): calls fn with callback as this thread's "
                        "eval-frame callback."),
    .tp_traverse = (traverseproc)CallWithCallback_traverse,
    .tp_clear = (inquiry)CallWithCallback_clear,
    .tp_methods = CallWithCallback_methods,
    .tp_members = CallWithCallback_members,
    .tp_getset = CallWithCallback_getset,
    .tp_descr_get = CallWithCallback_get,
    .tp_dictoffset = offsetof(CallWithCallback, dict),
    .tp_weaklistoffset = offsetof(CallWithCallback, weakrefs),
    .tp_new = CallWithCallback_new,
};

/* ------------------------------------------------------------------ module */

static PyMethodDef methods[] = {
    {"set_eval_frame", set_eval_frame, METH_O,
     "set_eval_frame(callback_or_None) -> previous: set this thread's eval-frame callback."},
    {"skip_code", skip_code, METH_O, "skip_code(code): never hand frames of code to the hook."},
    {"set_code_cache", set_code_cache, METH_VARARGS,
     "set_code_cache(code, cache_or_None): cache.lookup(frame) is asked before the callback."},
    {"get_code_cache", get_code_cache, METH_O, "get_code_cache(code) -> the code's cache or None."},
    {"add_disable_depth", add_disable_depth, METH_O,
     "add_disable_depth(delta) -> depth: turn this thread's hook off (+1) or back on (-1); 0 reads it."},
    {"counters", counters, METH_NOARGS, "counters() -> process-wide counts of hook events."},
    {"_set_foreign_evaluator_for_testing", set_foreign_evaluator_for_testing, METH_O,
     "_set_foreign_evaluator_for_testing(on): install (True) a stand-in for another JIT's evaluator, "
     "or CPython's (False)."},
    {NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "sot._eval_frame",
    .m_doc = "The PEP 523 frame-evaluation hook of sot (see sot.hook.eval_frame).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__eval_frame(void)
{
    if (PyType_Ready(&CustomCode_Type) < 0) {
        return NULL;
    }
    if (PyType_Ready(&FrameView_Type) < 0) {
        return NULL;
    }
    if (PyType_Ready(&CallWithCallback_Type) < 0) {
        return NULL;
    }
    if (PyType_Ready(&CacheBase_Type) < 0) {
        return NULL;
    }
    if (extra_index < 0) {
        extra_index = REQUEST_CODE_EXTRA_INDEX(free_extra);
        if (extra_index < 0) {
            return PyErr_Format(PyExc_RuntimeError, "no co_extra slot left for sot");
        }
        skip_marker = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
        str_lookup = PyUnicode_InternFromString("lookup");
        str_hits = PyUnicode_InternFromString("hits");
        str_lookup_slow = PyUnicode_InternFromString("_lookup_slow");
        if (skip_marker == NULL || str_lookup == NULL || str_hits == NULL || str_lookup_slow == NULL) {
            return NULL;
        }
    }
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(module, "CustomCode", (PyObject *)&CustomCode_Type) < 0 ||
        PyModule_AddObjectRef(module, "InterpreterFrame", (PyObject *)&FrameView_Type) < 0 ||
        PyModule_AddObjectRef(module, "CallWithCallback", (PyObject *)&CallWithCallback_Type) < 0 ||
        PyModule_AddObjectRef(module, "CacheBase", (PyObject *)&CacheBase_Type) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}

#else /* !SOT_HOOK_SUPPORTED: the package still installs; only the hook is missing. */

PyMODINIT_FUNC
PyInit__eval_frame(void)
{
    PyErr_Format(PyExc_ImportError, "sot's eval-frame hook supports CPython 3.11-3.13, not %d.%d",
                 PY_MAJOR_VERSION, PY_MINOR_VERSION);
    return NULL;
}

#endif /* SOT_HOOK_SUPPORTED */
