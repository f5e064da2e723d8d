/// A registry slot owned by Swift: a block's body, its argument, a timer's function, a waiter.
///
/// Non-copyable, so a slot has exactly one owner and is freed exactly once: `pushReleasing` and
/// `release` consume it (a second push or release of the same slot does not compile), and a slot
/// dropped unconsumed (a cancelled block's body, a timer never scheduled, a waiter whose wait
/// ended) goes to its state's release queue from its deinit, on any thread, without touching Lua,
/// as mlua's `RegistryKey` goes to its unref list. The queue is drained under the state's lock at
/// the next safe point (a host call, a turn of the loop, the next slot made). After the state
/// began closing, a dropped slot is forgotten: its value goes with the state.
struct RegistrySlot: ~Copyable {
    private let id: Int32
    /// Retained by hand: `discard` needs trivially destroyed stored properties.
    private let queue: Unmanaged<RegistryReleaseQueue>

    /// A slot holding the value at `index` (the stack is left as it was). The caller holds the
    /// state. Slots dropped meanwhile are freed first, so a loop making and dropping slots without
    /// a turn keeps the registry small.
    init(copying index: Int32, in stack: LuaStack) {
        self.init(copying: index, in: stack, queue: stack.state.releases)
    }

    /// The same with the state's release queue already at hand (the loop's hot path).
    init(copying index: Int32, in stack: LuaStack, queue: RegistryReleaseQueue) {
        queue.drain(on: stack)
        self.queue = .passRetained(queue)
        stack.pushCopy(of: index)
        id = stack.popIntoRegistry()
    }

    /// Pushes the value and keeps the slot (a repeating timer's function).
    borrowing func push(on stack: LuaStack) {
        stack.pushRegistryValue(id)
    }

    /// Pushes the value and frees the slot at once (the stack holds the value from now on).
    consuming func pushReleasing(on stack: LuaStack) {
        stack.pushRegistryValue(id)
        stack.freeRegistrySlot(id)
        queue.release()
        discard self
    }

    /// Frees the slot at once; `stack` is a stack of its state, whose lock the caller holds.
    consuming func release(on stack: LuaStack) {
        stack.freeRegistrySlot(id)
        queue.release()
        discard self
    }

    deinit {
        queue.takeRetainedValue().enqueue(id)
    }
}
