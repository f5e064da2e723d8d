import BlocksBridge
import CEdit
import CLua
import CLuaShim
#if canImport(Glibc)
import Glibc
#endif

/// lua.c's read-eval-print loop. On a terminal it edits lines with libedit (history, completion),
/// pretty-prints results, keeps the event loop running at the prompt and turns Ctrl-C into an
/// interruption of the running code; elsewhere it reads plain lines and prints with `print`.
struct REPL {
    let runner: Runner
    var stack: LuaStack { runner.stack }
    let editor: LineEditor?
    let history: History?
    let interrupts: InterruptWatcher
    /// Colours in results: on a terminal, unless NO_COLOR is set (https://no-color.org) or TERM is dumb.
    let colors: Bool

    init(runner: Runner) {
        self.runner = runner
        // `-E` (registry LUA_NOENV, as lua.c sets it) also ignores BKLUA_HISTORY.
        let environment = runner.stack.rawGet(LuaStack.registryIndex, field: "LUA_NOENV") == .nil
        runner.stack.pop()
        interrupts = InterruptWatcher(loop: runner.state.eventLoop)
        let noColor = getenv("NO_COLOR").map { $0.pointee != 0 } ?? false
        let dumb = getenv("TERM").map { String(cString: $0) == "dumb" } ?? true
        colors = isatty(0) != 0 && isatty(1) != 0 && !noColor && !dumb
        ReferenceHelp.install(on: runner.stack)
        if isatty(0) != 0 && isatty(1) != 0,
           let editor = LineEditor(loop: EventLoopAtPrompt(state: runner.state), completer: Completer(stack: runner.stack)) {
            self.editor = editor
            let history = History(environment: environment)
            history.load()
            self.history = history
        } else {
            editor = nil
            history = nil
            cedit_watch_interrupts()
        }
    }

    func prompt(firstLine: Bool) -> String {
        stack.pushGlobalTable()
        stack.rawGet(-1, field: firstLine ? "_PROMPT" : "_PROMPT2")
        let text = stack.toString(-1) ?? (firstLine ? "> " : ">> ")
        stack.pop(2)
        return text
    }

    enum Chunk {
        case loaded(source: String)
        case command(source: String)   // a prompt command (`:help name`), already answered
        case failed(LuaError, source: String)
        case cancelled
    }

    func readLine(firstLine: Bool) -> LineEditor.Input {
        if let editor { return editor.readLine(prompt: prompt(firstLine: firstLine)) }
        // Plain lines: work already due runs between them, and other threads' blocks may enter
        // Lua while the read waits.
        let loop = EventLoopAtPrompt(state: runner.state)
        if (loop.secondsUntilNextWork ?? 1) <= 0 { loop.runDueWork() }
        StandardStreams.writeOutput(prompt(firstLine: firstLine))
        guard let line = loop.waitOutsideLua({ Swift.readLine(strippingNewline: true) }) else { return .endOfInput }
        return .line(line)
    }

    /// True when `error` is a syntax error only because the chunk ended too soon.
    static func isIncomplete(_ error: LuaError) -> Bool {
        error.kind == .syntax && error.message.hasSuffix("<eof>")
    }

    /// Reads a complete chunk and pushes it compiled: `=expr` and bare expressions become
    /// `return ...`; an incomplete chunk continues on the `>>` prompt. Nil at end of input.
    func loadChunk() -> Chunk? {
        var line: String
        switch readLine(firstLine: true) {
        case .line(let text): line = text
        case .endOfInput: return nil
        case .cancelled: return .cancelled
        }
        let typed = line
        if ReferenceHelp.command(line) { return .command(source: typed) }
        if line.hasPrefix("=") { line = "return " + line.dropFirst() }
        if (try? stack.load("return " + line, name: "=stdin")) != nil { return .loaded(source: typed) }
        var chunk = line
        var source = typed  // as typed, for the history
        while true {
            do {
                try stack.load(chunk, name: "=stdin")
                return .loaded(source: source)
            } catch {
                guard REPL.isIncomplete(error) else { return .failed(error, source: source) }
                switch readLine(firstLine: false) {
                case .line(let more):
                    chunk += "\n" + more
                    source += "\n" + more
                case .endOfInput:
                    if editor != nil { StandardStreams.writeOutput("\n") }  // off the `>>` prompt
                    return .failed(error, source: source)
                case .cancelled: return .cancelled
                }
            }
        }
    }

    /// `_` holds the first value a command returned (statements that return nothing keep it).
    func rememberResult(above base: Int32) {
        guard stack.top > base else { return }
        stack.pushGlobalTable()
        stack.pushCopy(of: base + 1)
        stack.rawSet(-2, field: "_")
        stack.pop()
    }

    /// Prints the values on the stack above `base`: pretty on a terminal, else with `print`.
    func printResults(above base: Int32) {
        let count = stack.top - base
        guard count > 0 else { return }
        if editor != nil {
            let printer = PrettyPrinter(stack: stack, width: terminalWidth() - 2, colors: colors)
            do {
                StandardStreams.writeOutput(try printer.describe(from: base + 1) + "\n")
            } catch {
                // As `print` fails on such a value (lua.c: no progname in interactive mode).
                Runner.message(nil, "error calling 'print' (\(error.message))")
            }
            return
        }
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

    func terminalWidth() -> Int {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 20 { return Int(size.ws_col) }
        return 80
    }

    /// Runs Lua with Ctrl-C armed to interrupt it, as lua.c's `docall` does.
    func interruptible<R>(_ body: () -> R) -> R {
        cedit_set_running_state(stack.L)
        defer { cedit_set_running_state(nil) }
        return body()
    }

    /// What the prompt prints for a command's error. Ctrl-C stops a command wherever it runs (the
    /// hook in Lua code raises `stdin:1: interrupted!`, a wait of the tasks engine `interrupted`, the
    /// loop in Swift returns first): one message for all, with no position or traceback to read.
    static func describe(_ error: LuaError, interrupted: Bool) -> String {
        if interrupted, error.message.contains("interrupted") { return "interrupted!" }
        return error.description
    }

    func run() {
        while let chunk = loadChunk() {
            switch chunk {
            case .loaded(let source):
                history?.add(source)
                let base = stack.top - 1
                interruptible { () -> Void in
                    do throws(LuaError) {
                        try stack.call(arguments: 0, results: LUA_MULTRET)
                        rememberResult(above: base)
                        printResults(above: base)
                    } catch {
                        Runner.message(nil, Self.describe(error, interrupted: cedit_take_interrupt() != 0))
                    }
                }
                stack.top = base
            case .failed(let error, let source):
                history?.add(source)
                Runner.message(nil, error.description)
            case .command(let source):
                history?.add(source)
            case .cancelled:
                break
            }
        }
        stack.top = 0
        StandardStreams.writeOutput("\n")
    }
}
