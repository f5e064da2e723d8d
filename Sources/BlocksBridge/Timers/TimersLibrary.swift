extension BKLibrary {
    /// NSTimer+BlocksKit: timers on the event loop calling `f(timer)`.
    public static let timers = BKLibrary(name: "Timers", functions: [
        // scheduledTimerWithTimeInterval(interval, f [, repeats]) -> a timer already on the loop
        BKFunction("scheduledTimerWithTimeInterval") { stack throws(LuaRaise) in
            let timer = try makeTimer(stack)
            timer.schedule()
            stack.push(object: timer)
            return 1
        },
        // timerWithTimeInterval(interval, f [, repeats]) -> a timer that starts on timer:schedule()
        BKFunction("timerWithTimeInterval") { stack throws(LuaRaise) in
            stack.push(object: try makeTimer(stack))
            return 1
        },
    ])

    private static func makeTimer(_ stack: LuaStack) throws(LuaRaise) -> BlockTimer {
        let interval = try checkDelay(stack, 1, "interval")
        try stack.checkFunction(2)
        let repeats = stack.toBool(3)
        return stack.eventLoop.timer(interval: interval, repeats: repeats, functionAt: 2, in: stack)
    }
}
