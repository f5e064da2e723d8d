import CLuaShim

/// Writes through C stdio, the streams Lua's `print` and `io.stderr` use, so output keeps its order.
public enum StandardStreams {
    public static func writeOutput(_ text: String) {
        var text = text
        text.withUTF8 { $0.withMemoryRebound(to: CChar.self) { bk_write_stdout($0.baseAddress, $0.count) } }
    }

    public static func writeError(_ text: String) {
        var text = text
        text.withUTF8 { $0.withMemoryRebound(to: CChar.self) { bk_write_stderr($0.baseAddress, $0.count) } }
    }
}
