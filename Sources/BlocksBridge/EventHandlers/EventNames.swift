/// The `events` argument of the event handler functions: one event name or a list of names.
enum EventNames {
    /// Pushes a set `{name = true, ...}` of the events at `index`; returns how many there are.
    @discardableResult
    static func pushSet(_ stack: LuaStack, at index: Int32) throws(LuaRaise) -> Int {
        switch stack.type(at: index) {
        case .string:
            stack.pushNewTable(recordCount: 1)
            stack.pushCopy(of: index)
            stack.push(true)
            stack.rawSet(-3)
            return 1
        case .table:
            let count = stack.listCount(index)
            stack.pushNewTable(recordCount: Int32(clamping: count))
            let set = stack.top
            for i in stride(from: 1, through: count, by: 1) {
                guard stack.rawGet(index, i) == .string else {
                    stack.top = set - 1
                    throw .argument(index, "event names must be strings")
                }
                stack.push(true)
                stack.rawSet(set)
            }
            return Int(count)
        default:
            throw .type(index, expected: "string or table")
        }
    }
}
