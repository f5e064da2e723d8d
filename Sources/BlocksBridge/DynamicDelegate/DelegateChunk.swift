/// The Lua half of dynamic delegates, loaded once per state.
///
/// Why Lua: `dd:method(...)` must cost about what a plain Lua method call costs. A Swift function on
/// that path pays the trampoline and a protected call per call; a Lua closure cached in the delegate
/// table (the VM's raw-field fast path, then one closure call) does not. The same goes for the
/// `__index` / `__newindex` hooks installed on Lua classes: every method lookup of an instance goes
/// through them. The chunk uses no globals (it may be loaded before the standard libraries are open);
/// `rawset` is passed in by Swift (a Swift function; `hook` prefers the base library's C `rawset`).
enum DelegateChunk {
    /// The chunk (`DelegateChunk.lua` beside this file, embedded by SwiftPM).
    static var source: [UInt8] { PackageResources.DelegateChunk_lua }
}
