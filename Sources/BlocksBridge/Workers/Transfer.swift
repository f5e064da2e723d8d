import CLuaShim

/// A bridged class whose instances may cross between Lua states (worker arguments and results,
/// channel messages): the other state gets the same Swift object. Its methods then run on several
/// threads at once, hence `Sendable`.
public protocol LuaShareable: LuaBridged, Sendable {}

/// Called by the C copier (Transfer.c) with no allocation: reads the userdata's tag and object.
@_cdecl("bk_transfer_is_shareable")
func transferIsShareable(_ L: OpaquePointer?, _ index: Int32) -> Int32 {
    guard let L, let stack = LuaStack(bridgeState: L) else { return 0 }
    return stack.bridgedObject(at: index) is any LuaShareable ? 1 : 0
}

/// Called by the C copier with the target's swift_depth raised (the push must not fail).
@_cdecl("bk_transfer_push_shared")
func transferPushShared(_ from: OpaquePointer?, _ index: Int32, _ to: OpaquePointer?) -> Int32 {
    guard let from, let to, let source = LuaStack(bridgeState: from), let target = LuaStack(bridgeState: to),
          let object = source.bridgedObject(at: index) as? any LuaShareable else { return 0 }
    target.pushShared(object)
    return 1
}

extension LuaStack {
    fileprivate func pushShared<T: LuaShareable>(_ object: T) { push(object: object) }
}

/// A value that crosses to a worker thread without checks: a Lua state owned by one thread at a
/// time (its lock and the hand-over through Dispatch or a condition keep that true).
struct HandedOver<T>: @unchecked Sendable {
    let value: T
}
