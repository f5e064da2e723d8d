extension LuaProfile {
    /// The collapsed-stack text flamegraph.pl, inferno and speedscope read: one `frame;frame;frame
    /// count` line per stack, sorted.
    public var folded: String {
        var text = ""
        for (stack, count) in stacks.sorted(by: { $0.key < $1.key }) {
            text += "\(stack) \(count)\n"
        }
        return text
    }
}
