import CLua
import CLuaShim

extension LuaStack {
    /// Starts sampling this state on the calling thread (it runs the state and holds its lock):
    /// its stacks are rooted at `label`. Nil when the state is profiled already.
    func attachProfiler(_ profiler: OpaquePointer, label: String) -> OpaquePointer? {
        bk_profiler_attach(profiler, L, label)
    }

    /// Stops sampling this state (same thread rules) and frees the target.
    func detachProfiler(_ target: OpaquePointer) {
        bk_profiler_detach(L, target)
    }
}
