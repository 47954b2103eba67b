# The Python half of the Demiurge worker protocol (package pyworker).
#
# The Host starts this program once per core revision and speaks
# line-delimited JSON with it over stdin/stdout. The Host sends
#   {"id": N, "method": "invoke", "params": {...}}
# and the worker answers {"id": N, "result": {...}} or
# {"id": N, "error": {"type", "message", "where"}}. While an invocation runs,
# every ctx call and every import of core code is a request of the worker
# to the Host ({"id": "wK", "method": "call"|"get"|"source", "params"}),
# answered with {"id": "wK", "result"} or {"id": "wK", "error"}. Nothing is
# granted by this program: the Host checks every call when it is made.
#
# Standard library only. Authored code's print() goes to stderr, so it can
# never forge a protocol line.

import importlib
import importlib.machinery
import json
import os
import signal
import sys
import types

# dataclasses, traceback, threading and importlib's abc and util modules
# are imported where they are needed: together they cost a cold worker
# more than its interpreter's own start.

# In the sandbox this program is its namespace's PID 1, which the kernel
# gives no default action for SIGTERM: the Host's request to end must be
# handled to be heard.
signal.signal(signal.SIGTERM, lambda signum, frame: os._exit(128 + signum))

_IN = sys.stdin.buffer
_OUT = sys.stdout.buffer
sys.stdout = sys.stderr
sys.stdin = open(os.devnull, "r")

_PREFIX = "_demiurge_slot_"
_ASYNC = {"tools.call", "agents.run"}


class ProtocolError(Exception):
    pass


def _write(msg):
    _OUT.write(json.dumps(msg, separators=(",", ":"), ensure_ascii=False, default=_jsonable).encode("utf-8") + b"\n")
    _OUT.flush()


def _read():
    line = _IN.readline()
    if not line:
        sys.exit(0)
    try:
        msg = json.loads(line)
    except ValueError:
        raise ProtocolError("malformed line from the Host")
    if not isinstance(msg, dict):
        raise ProtocolError("message is not an object")
    return msg


def _jsonable(v):
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    if isinstance(v, (tuple, set, frozenset)):
        return list(v)
    if isinstance(v, _Record):
        return v._asdict()
    if hasattr(type(v), "__dataclass_fields__") and not isinstance(v, type):
        import dataclasses

        return dataclasses.asdict(v)
    raise TypeError("value of type %s is not JSON-compatible" % type(v).__name__)


_seq = 0


def _rpc(method, params):
    global _seq
    _seq += 1
    rid = "w%d" % _seq
    _write({"id": rid, "method": method, "params": params})
    while True:
        msg = _read()
        if msg.get("method") != "invoke":
            break
        # A ctx call of this invocation runs another component of the core
        # (ctx.tools.call of a Python tool, a child turn's Python slot):
        # the Host nests it here, and answers this request afterwards.
        _answer(msg)
    if msg.get("id") != rid:
        raise ProtocolError("unexpected reply id")
    if "error" in msg:
        err = msg["error"] or {}
        raise _exception(err.get("type"), err.get("message", ""))
    return msg.get("result")


class CapabilityDenied(PermissionError):
    pass


_ERRORS = {
    "PermissionError": CapabilityDenied,
    "TypeError": TypeError,
    "ValueError": ValueError,
    "TimeoutError": TimeoutError,
    "KeyError": KeyError,
}


def _exception(kind, message):
    return _ERRORS.get(kind, RuntimeError)(message)


# ---- the demiurge.sdk module -------------------------------------------------


def _sdk_types():
    """The SDK's dataclasses, defined when authored code first asks for
    one."""
    if not _SDK_TYPES:
        import dataclasses

        @dataclasses.dataclass
        class ToolResult:
            content: str
            data: object = None
            is_error: bool = False
            terminate: bool = False
            model_output: object = None
            display_output: object = None

        @dataclasses.dataclass
        class ArtifactRef:
            path: object = None
            url: object = None
            kind: object = None
            media_type: object = None
            summary: object = None
            filename: object = None
            artifact_id: object = None
            metadata: dict = dataclasses.field(default_factory=dict)

        @dataclasses.dataclass
        class ContextContribution:
            content: str
            role: str = "system"
            placement: str = "pre_current_user"

        for cls in (ToolResult, ArtifactRef, ContextContribution):
            cls.__module__ = "demiurge.sdk"
            cls.__qualname__ = cls.__name__
            _SDK_TYPES[cls.__name__] = cls
    return _SDK_TYPES


_SDK_TYPES = {}


class _Record:
    """A read-only value the Host returned (HistoryMessageSummary,
    AgentRunResult, AgentSpawnHandle, DeliveryHandle): attributes and
    item access both work."""

    __slots__ = ("_type", "_data")

    def __init__(self, typ, data):
        object.__setattr__(self, "_type", typ)
        object.__setattr__(self, "_data", data)

    def __getattr__(self, name):
        try:
            return self._data[name]
        except KeyError:
            raise AttributeError("%s has no attribute %s" % (self._type, name)) from None

    def __getitem__(self, key):
        return self._data[key]

    def get(self, key, default=None):
        return self._data.get(key, default)

    def __setattr__(self, name, value):
        raise AttributeError("%s is read-only" % self._type)

    def __repr__(self):
        return "%s(%s)" % (self._type, ", ".join("%s=%r" % kv for kv in sorted(self._data.items())))

    def __eq__(self, other):
        return isinstance(other, _Record) and other._data == self._data

    def _asdict(self):
        return dict(self._data)


def _sdk_module():
    sdk = types.ModuleType("demiurge.sdk")

    def sdk_getattr(name):
        cls = _sdk_types().get(name)
        if cls is None:
            raise AttributeError("module 'demiurge.sdk' has no attribute %r" % name)
        setattr(sdk, name, cls)
        return cls

    sdk.__getattr__ = sdk_getattr
    for name, value in {
        "CapabilityDenied": CapabilityDenied,
        "HistoryMessageSummary": _Record,
        "AgentRunResult": _Record,
        "AgentSpawnHandle": _Record,
    }.items():
        setattr(sdk, name, value)
    pkg = types.ModuleType("demiurge")
    pkg.__path__ = []
    pkg.sdk = sdk
    sys.modules["demiurge"] = pkg
    sys.modules["demiurge.sdk"] = sdk


# ---- ctx proxies -------------------------------------------------------------


def _decode(v):
    if isinstance(v, dict):
        if "$obj" in v:
            typ = v["$obj"]
            return _Record(typ, {k: _decode(x) for k, x in v.items() if k != "$obj"})
        return {k: _decode(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_decode(x) for x in v]
    return v


class _Ready:
    """The result of an async ctx method, already computed: await it."""

    __slots__ = ("_value",)

    def __init__(self, value):
        self._value = value

    def __await__(self):
        return self._value
        yield  # noqa: makes this a generator

    def __getattr__(self, name):
        return getattr(self._value, name)


def _method(path):
    def call(*args, **kwargs):
        value = _decode(_rpc("call", {"path": path, "args": list(args), "kwargs": kwargs}))
        return _Ready(value) if path in _ASYNC else value

    call.__name__ = path.rpartition(".")[2]
    call.__qualname__ = "ctx." + path
    return call


class _Node:
    __slots__ = ("_type", "_path", "_attrs")

    def __init__(self, desc, path):
        object.__setattr__(self, "_type", desc.get("type", "ctx"))
        object.__setattr__(self, "_path", path)
        attrs = {}
        for name, d in desc.get("attrs", {}).items():
            sub = name if not path else path + "." + name
            t = d.get("t")
            if t == "obj":
                attrs[name] = _Node(d, sub)
            elif t == "fn":
                attrs[name] = _method(sub)
            elif t == "prop":
                attrs[name] = _Prop(sub)
            else:
                attrs[name] = _freeze(_decode(d.get("v")))
        object.__setattr__(self, "_attrs", attrs)

    def __getattr__(self, name):
        try:
            v = self._attrs[name]
        except KeyError:
            raise AttributeError("%s has no attribute %s" % (self._type, name)) from None
        if isinstance(v, _Prop):
            return _decode(_rpc("get", {"path": v.path}))
        return v

    def __setattr__(self, name, value):
        raise AttributeError("%s.%s is read-only" % (self._type, name))

    def __dir__(self):
        return sorted(self._attrs)

    def __repr__(self):
        return "<%s>" % self._type


class _Prop:
    __slots__ = ("path",)

    def __init__(self, path):
        self.path = path


def _freeze(v):
    if isinstance(v, list):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, dict):
        return types.MappingProxyType({k: _freeze(x) for k, x in v.items()})
    return v


# ---- loading core code -------------------------------------------------------


class _SourceLoader:
    """A loader of one module's source the Host sent (importlib's loader
    protocol; its abc module is not imported for it)."""

    def __init__(self, path, source):
        self.path = path
        self.source = source

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__file__ = self.path
        code = compile(self.source, self.path, "exec", dont_inherit=True)
        exec(code, module.__dict__)


class _CoreFinder:
    """Finds the submodules of a synthetic component package by asking the
    Host for their source: the worker cannot see the core's files."""

    def find_spec(self, fullname, path, target=None):
        if not fullname.startswith(_PREFIX) or path is None:
            return None
        found = _rpc("source", {"dirs": list(path), "name": fullname.rpartition(".")[2]})
        if not found:
            return None
        loader = _SourceLoader(found["path"], found["source"])
        spec = importlib.machinery.ModuleSpec(fullname, loader, origin=found["path"], is_package=found["package"])
        if found["package"]:
            spec.submodule_search_locations = [found["dir"]]
        return spec


def _fresh_package(p):
    # Every invocation executes the component's modules afresh (module-level
    # state does not persist, as in the original); a nested invocation of
    # another component leaves the outer one's modules alone.
    pkg_name = p["package"]
    for name in [n for n in sys.modules if n == pkg_name or n.startswith(pkg_name + ".")]:
        del sys.modules[name]
    pkg = types.ModuleType(pkg_name)
    pkg.__path__ = list(p["search"])
    pkg.__package__ = pkg_name
    spec = importlib.machinery.ModuleSpec(pkg_name, None, is_package=True)
    spec.submodule_search_locations = pkg.__path__
    pkg.__spec__ = spec
    sys.modules[pkg_name] = pkg
    return pkg_name


class EntrypointError(Exception):
    pass


def _entry(p):
    pkg = _fresh_package(p)
    try:
        module = importlib.import_module(pkg + "." + p["module"])
    except ModuleNotFoundError as e:
        if e.name and e.name.startswith(pkg + "." + p["module"].split(".")[0]):
            raise EntrypointError("slot module not found: %s" % p["module_path"]) from None
        raise
    fn = getattr(module, p["function"], None)
    if not callable(fn):
        raise EntrypointError("entrypoint is not callable: %s" % p["entrypoint"])
    return fn


# ---- invocations -------------------------------------------------------------


def _awaitable(value):
    """inspect.isawaitable, without importing inspect for every worker."""
    if isinstance(value, types.CoroutineType) or hasattr(type(value), "__await__"):
        return True
    # A generator-based coroutine (types.coroutine): CO_ITERABLE_COROUTINE.
    return isinstance(value, types.GeneratorType) and bool(value.gi_code.co_flags & 0x100)


def _run(fn, args):
    value = fn(*args)
    if not _awaitable(value):
        return value
    # asyncio costs a worker tens of milliseconds to import: only a core
    # with an async entrypoint pays for it, on its first such call.
    import asyncio

    async def wait():
        return await value

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    # A nested invocation inside an outer async one: this thread's loop is
    # busy waiting for the Host, so the nested coroutine gets a loop of its
    # own on a thread this call waits for.
    box = {}

    def target():
        try:
            box["value"] = asyncio.run(wait())
        except BaseException as e:  # noqa: re-raised below
            box["error"] = e

    import threading

    th = threading.Thread(target=target, name="demiurge-nested")
    th.start()
    th.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _tool_result(value):
    tool_result = _SDK_TYPES.get("ToolResult")
    if tool_result is not None and isinstance(value, tool_result):
        import dataclasses

        value = dataclasses.asdict(value)
    if isinstance(value, dict):
        out = {}
        for k in ("content", "data", "is_error", "terminate", "model_output", "display_output"):
            if k in value and value[k] is not None:
                out[k] = value[k]
        if "content" in out and not isinstance(out["content"], str):
            out["content"] = str(out["content"])
        json.dumps(out, default=_jsonable)
        return out
    if value is None:
        return {}
    return {"content": str(value)}


def _where(tb, roots):
    where = ""
    import traceback

    for frame in traceback.extract_tb(tb):
        if frame.filename.startswith(roots):
            where = "%s:%d" % (frame.filename, frame.lineno)
    return where


def _invoke(p):
    ctx = _Node(p["ctx"], "")
    fn = _entry(p)
    if p["kind"] == "tool":
        args = dict(p.get("args") or {})
        return {"value": _tool_result(_run(fn, (ctx, args)))}
    value = _run(fn, (ctx,))
    return {"return_type": None if value is None else type(value).__name__}


def _serve():
    _sdk_module()
    sys.meta_path.insert(0, _CoreFinder())
    _write({"ready": True, "python": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable})
    while True:
        msg = _read()
        if msg.get("method") != "invoke":
            raise ProtocolError("expected an invoke request")
        _answer(msg)


def _answer(msg):
    p = msg.get("params") or {}
    try:
        result = _invoke(p)
    except ProtocolError:
        raise
    except SystemExit as e:
        _write({"id": msg.get("id"), "error": {"type": "SystemExit", "message": "authored code called exit(%s)" % (e.code,), "where": ""}})
    except BaseException as e:  # noqa: authored code may raise anything
        text = str(e) if str(e) else type(e).__name__
        if isinstance(e, (ModuleNotFoundError,)) and e.name:
            text = "No module named %r" % e.name
        err = {"type": type(e).__name__, "message": text, "where": _where(e.__traceback__, tuple(p.get("roots", ["agent/"])))}
        if isinstance(e, SyntaxError) and e.filename:
            err["where"] = "%s:%s" % (e.filename, e.lineno)
            err["message"] = e.msg
        _write({"id": msg.get("id"), "error": err})
    else:
        _write({"id": msg.get("id"), "result": result})


def _limit_processes():
    try:
        import resource

        n = int(os.environ.get("DEMIURGE_WORKER_NPROC", "0"))
        if n > 0:
            soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
            if hard == resource.RLIM_INFINITY or n < hard:
                resource.setrlimit(resource.RLIMIT_NPROC, (n, n))
    except (ImportError, ValueError, OSError):
        pass


# Process creation: authored Python asks the Host for commands (the terminal
# tool through ctx.tools.call, behind its capability and approval). In the
# sandbox the kernel refuses the worker every new process (a seccomp filter,
# sandbox.Policy.NoProcesses), whatever this hook sees; the hook words the
# refusal for the ordinary ways, and without the sandbox (sandbox.mode: off)
# it is all there is. Loading foreign symbols through ctypes is refused too.
_REFUSED = {
    "os.fork": "process creation",
    "os.forkpty": "process creation",
    "os.posix_spawn": "process creation",
    "os.exec": "process creation",
    "os.spawn": "process creation",
    "os.system": "process creation",
    "subprocess.Popen": "process creation",
    "ctypes.dlopen": "loading native libraries through ctypes",
    "ctypes.dlsym": "loading native symbols through ctypes",
    "ctypes.dlsym/handle": "loading native symbols through ctypes",
}


def _audit(event, args):
    what = _REFUSED.get(event)
    if what is not None:
        raise PermissionError("%s is not available to authored Python (%s); run commands through ctx.tools.call" % (what, event))


if __name__ == "__main__":
    _limit_processes()
    sys.addaudithook(_audit)
    try:
        _serve()
    except ProtocolError as e:
        sys.stderr.write("demiurge worker: protocol error: %s\n" % e)
        sys.exit(3)
