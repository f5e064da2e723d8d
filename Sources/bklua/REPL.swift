import BlocksBridge
import CLua
import CLuaShim
#if canImport(Glibc)
import Glibc
#endif

/// lua.c's read-eval-print loop on plain lines (no line editing).
struct REPL {
    let runner: Runner
    var stack: LuaStack { runner.stack }

    func prompt(firstLine: Bool) -> String {
        stack.pushGlobalTable()
        stack.rawGet(-1, field: firstLine ? "_PROMPT" : "_PROMPT2")
        let text = stack.toString(-1) ?? (firstLine ? "> " : ">> ")
        stack.pop(2)
        return text
    }

    func readLine(firstLine: Bool) -> String? {
        StandardStreams.writeOutput(prompt(firstLine: firstLine))
        return Swift.readLine(strippingNewline: true)
    }

    /// True when `error` is a syntax error only because the chunk ended too soon.
    static func isIncomplete(_ error: LuaError) -> Bool {
        error.kind == .syntax && error.message.hasSuffix("<eof>")
    }

    /// Reads a complete chunk and pushes it compiled; nil at end of input.
    func loadChunk() -> Result<Void, LuaError>? {
        guard var line = readLine(firstLine: true) else { return nil }
        if line.hasPrefix("=") { line = "return " + line.dropFirst() }
        if (try? stack.load("return " + line, name: "=stdin")) != nil { return .success(()) }
        var chunk = line
        while true {
            do {
                try stack.load(chunk, name: "=stdin")
                return .success(())
            } catch {
                guard REPL.isIncomplete(error), let more = readLine(firstLine: false) else {
                    return .failure(error)
                }
                chunk += "\n" + more
            }
        }
    }

    /// Prints the values on the stack above `base` with the global `print`.
    func printResults(above base: Int32) {
        let count = stack.top - base
        guard count > 0 else { return }
        stack.pushGlobalTable()
        stack.rawGet(-1, field: "print")
        stack.remove(at: -2)
        stack.insert(at: base + 1)
        do {
            try stack.call(arguments: count, results: 0)
        } catch {
            Runner.message(nil, "error calling 'print' (\(error.message))")
        }
    }

    func run() {
        while let loaded = loadChunk() {
            switch loaded {
            case .success:
                let base = stack.top - 1
                do {
                    try stack.call(arguments: 0, results: LUA_MULTRET)
                    printResults(above: base)
                } catch {
                    Runner.message(nil, error.description)
                }
                stack.top = base
            case .failure(let error):
                Runner.message(nil, error.description)
            }
        }
        stack.top = 0
        StandardStreams.writeOutput("\n")
    }
}
