import CLua
import CLuaShim

/// The collections' walk (`Walk.c`): a block called on every element by a C driver, with raw
/// table work only between calls (DEVELOPERS.md rule 3).
extension LuaStack {
    /// Lays out `walk` in a userdata on top and returns the status that has the trampoline run it
    /// once this Swift frame is gone (`TrampolineStatus.continueWalk`): blocks may then raise and
    /// yield. Return it from the exported function.
    func continueWithWalk(_ walk: bk_walk) -> Int32 {
        var walk = walk
        bk_walk_prepare(L, &walk)
        return TrampolineStatus.continueWalk.code
    }

    /// Runs `walk` from `walk.first` now, inside one protected call with message handler `handler`
    /// (`bk_walk_run`: actions that write tables only; blocks cannot yield). Returns a Lua status
    /// (the error value on top on failure), or `BK_WALK_NO_STACK` (nothing pushed).
    func runWalk(_ walk: inout bk_walk, handler: Int32) -> Int32 { bk_walk_run(L, &walk, handler) }
}
