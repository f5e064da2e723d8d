import CLuaShim

extension BKLibrary {
    /// NSObject+BKBlockExecution: delayed, cancellable blocks on queues, and the loop running them.
    public static let blockExecution = BKLibrary(name: "Block execution", functions: [
        // performBlock([obj,] f, delay [, queue]) -> handle
        BKFunction("performBlock") { stack throws(LuaRaise) in
            let block = try BlockArguments(stack, takesQueue: true)
            let handle = stack.eventLoop.perform(
                after: block.delay, on: block.queue ?? .main, functionAt: block.function,
                object: block.object, in: stack)
            stack.push(newObject: handle)
            return 1
        },
        // performBlockInBackground([obj,] f, delay) -> handle
        BKFunction("performBlockInBackground") { stack throws(LuaRaise) in
            let block = try BlockArguments(stack, takesQueue: false)
            let handle = stack.eventLoop.perform(
                after: block.delay, on: .background, functionAt: block.function, object: block.object, in: stack)
            stack.push(newObject: handle)
            return 1
        },
        // cancelBlock(handle)
        BKFunction("cancelBlock") { stack throws(LuaRaise) in
            let handle = try stack.checkObject(BlockHandle.self, at: 1)
            handle.loop.cancel(handle, on: stack)
            return 0
        },
        // queue(label [, "serial" | "concurrent"]) -> a new queue
        BKFunction("queue") { stack throws(LuaRaise) in
            let label = try stack.checkString(1)
            let kind = try stack.checkOption(2, ["serial", "concurrent"], default: "serial")
            stack.push(object: BlockQueue(label: label, concurrent: kind == 1))
            return 1
        },
        // run([seconds]) -> true when idle, false when stopped or out of time
        BKFunction("run") { stack throws(LuaRaise) in
            var seconds: Double?
            if !stack.isNoneOrNil(1) {
                let value = try stack.checkNumber(1)
                try stack.argCheck(!value.isNaN, 1, "number is NaN")
                seconds = value
            }
            let loop = stack.eventLoop
            if loop.isInBackgroundBlock {
                throw .message("bk.run cannot run the loop from a block of another queue")
            }
            let idle = loop.run(seconds: seconds)
            if !idle { try stack.raiseIfLimitsStopped() }
            stack.push(idle)
            return 1
        },
        BKFunction("stop") { stack in
            stack.eventLoop.stop()
            return 0
        },
        BKFunction("pending") { stack in
            stack.push(stack.eventLoop.pendingCount)
            return 1
        },
        // onError([f]) -> the previous handler (nil: the default, stderr). No argument: only reads.
        BKFunction("onError") { stack throws(LuaRaise) in
            if stack.type(at: 1) != .none, !stack.isNoneOrNil(1) { try stack.checkFunction(1) }
            stack.rawGet(LuaStack.registryIndex, field: LuaStack.errorHandlerKey)
            if stack.type(at: 1) != .none {
                stack.pushCopy(of: 1)
                stack.rawSet(LuaStack.registryIndex, field: LuaStack.errorHandlerKey)
            }
            return 1
        },
        // now() -> seconds on the loop's monotonic clock
        BKFunction("now") { stack in
            stack.push(Double(MonotonicClock.now()) / 1e9)
            return 1
        },
        // threadId() -> the calling OS thread's id (blocks on other queues run on other threads)
        BKFunction("threadId") { stack in
            stack.push(Int64(bk_loop_thread_id()))
            return 1
        },
    ], setUp: { stack, module in
        stack.push(object: BlockQueue.main)
        stack.rawSet(module, field: "mainQueue")
        stack.push(object: BlockQueue.background)
        stack.rawSet(module, field: "backgroundQueue")
    })
}

/// The arguments of performBlock: `([obj,] f, delay [, queue])`. The object form is taken when
/// the first argument is not a function, or when both first two are.
struct BlockArguments {
    let function: Int32
    let object: Int32?
    let delay: Double
    let queue: BlockQueue?

    init(_ stack: LuaStack, takesQueue: Bool) throws(LuaRaise) {
        let hasObject = !(stack.type(at: 1) == .function && stack.type(at: 2) != .function)
        function = hasObject ? 2 : 1
        object = hasObject ? 1 : nil
        try stack.checkFunction(function)
        delay = try checkDelay(stack, function + 1)
        if takesQueue, !stack.isNoneOrNil(function + 2) {
            queue = try stack.checkObject(BlockQueue.self, at: function + 2)
        } else {
            queue = nil
        }
    }
}

/// A delay or interval in seconds (`what` names it in the error): any finite number (negative means
/// now). NaN and infinities are refused: an infinite delay would keep the loop alive forever. Huge
/// finite values are safe: `MonotonicClock.nanoseconds` clamps them to 10^9 s.
func checkDelay(_ stack: LuaStack, _ index: Int32, _ what: String = "delay") throws(LuaRaise) -> Double {
    let value = try stack.checkNumber(index)
    try stack.argCheck(!value.isNaN, index, "number is NaN")
    try stack.argCheck(value.isFinite, index, "\(what) must be a finite number")
    return value
}
