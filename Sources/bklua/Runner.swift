import BlocksBridge
import CLua
import CLuaShim
#if canImport(Glibc)
import Glibc
#endif

/// lua.c's `pmain`, on a bridge state: options, LUA_INIT, -e/-l, the script, then the REPL.
struct Runner {
    let progname: String
    let argv: [String]
    let state: LuaState
    var stack: LuaStack { state.stack }

    /// Writes `progname: message` to stderr, as lua.c's `l_message`.
    static func message(_ progname: String?, _ text: String) {
        var line = ""
        if let progname { line += progname + ": " }
        line += text + "\n"
        StandardStreams.writeError(line)
    }

    /// Reports a failure as lua.c's `report`; returns false.
    @discardableResult
    func report(_ error: LuaError) -> Bool {
        Runner.message(progname, error.description)
        return false
    }

    /// lua.c's option lines, shared by the usage message (which must stay lua.c's) and `--help`.
    static let luaOptions = """
      -e stat   execute string 'stat'
      -i        enter interactive mode after executing 'script'
      -l mod    require library 'mod' into global 'mod'
      -l g=mod  require library 'mod' into global 'g'
      -v        show version information
      -E        ignore environment variables
      -W        turn warnings on
      --        stop handling options
      -         stop handling options and execute stdin
    """

    func printUsage(badOption: String) {
        var text = "\(progname): "
        let bytes = Array(badOption.utf8)
        if bytes.count > 1, bytes[1] == UInt8(ascii: "e") || bytes[1] == UInt8(ascii: "l") {
            text += "'\(badOption)' needs argument\n"
        } else {
            text += "unrecognized option '\(badOption)'\n"
        }
        // The usage text stays lua.c's (scripts compare it); the sandbox options are in the README.
        if ["--memory-limit", "--instruction-limit", "--time-limit"].contains(badOption) {
            text = "\(progname): '\(badOption)' needs a non-negative number\n"
        } else if badOption.hasPrefix("--profile-rate=") {
            text = "\(progname): '\(badOption)': the rate is a whole number of samples per second, 1 to 100000\n"
        } else if badOption == "--profile=" {
            text = "\(progname): '--profile=' needs a file name\n"
        } else if badOption == "--dap" || badOption == "--dap-listen" {
            text = "\(progname): '\(badOption)' must be the first argument (bklua --dap, or bklua --dap-listen PORT [--dap-wait] script)\n"
        } else if badOption == "--dap-wait" {
            text = "\(progname): '--dap-wait' goes right after --dap-listen's port (bklua --dap-listen PORT --dap-wait script)\n"
        }
        text += """
        usage: \(progname) [options] [script [args]]
        Available options are:
        \(Self.luaOptions)

        """
        StandardStreams.writeError(text)
    }

    /// lua.c's version line, then BlocksBridge's (`-v`, `-i` and the prompt's banner).
    static func printVersion() {
        StandardStreams.writeOutput(String(cString: bk_copyright()) + "\n" + versionLine + "\n")
    }

    static let versionLine = "BlocksBridge \(BKModule.version) (bklua, the bk module: bk.version())"

    /// The global `arg`: script name at 0, its arguments after, interpreter options before.
    func createArgTable(scriptIndex: Int) {
        let script = scriptIndex == argv.count ? 0 : scriptIndex
        stack.pushNewTable(arrayCount: Int32(max(0, argv.count - (script + 1))), recordCount: Int32(script + 1))
        for (i, value) in argv.enumerated() {
            stack.push(value)
            stack.rawSet(-2, Int64(i - script))
        }
        setGlobal("arg")
    }

    /// `_G[name] = top` (popped), raw: bklua's own set-up must not run user metamethods.
    func setGlobal(_ name: String) {
        stack.pushGlobalTable()
        stack.insert(at: -2)
        stack.rawSet(-2, field: name)
        stack.pop()
    }

    /// Loads and runs a chunk of text (lua.c's `dostring`).
    func doString(_ code: String, name: String) -> Bool {
        do {
            try stack.load(code, name: name)
            try stack.call(arguments: 0, results: 0)
            return true
        } catch {
            return report(error)
        }
    }

    /// Loads and runs a file, nil for stdin (lua.c's `dofile`).
    func doFile(_ path: String?) -> Bool {
        do {
            try stack.loadFile(path)
            try stack.call(arguments: 0, results: 0)
            return true
        } catch {
            return report(error)
        }
    }

    /// `-l [g=]mod`: `g = require(mod)`; a `-suffix` after the module name is dropped from the global.
    func doLibrary(_ spec: String) -> Bool {
        var global = spec
        let module: String
        if let equals = spec.firstIndex(of: "=") {
            global = String(spec[..<equals])
            module = String(spec[spec.index(after: equals)...])
        } else {
            module = spec
            if let mark = spec.firstIndex(of: "-") { global = String(spec[..<mark]) }
        }
        stack.pushGlobalTable()
        stack.rawGet(-1, field: "require")
        stack.remove(at: -2)
        stack.push(module)
        do {
            try stack.call(arguments: 1, results: 1)
        } catch {
            return report(error)
        }
        setGlobal(global)
        return true
    }

    /// Runs LUA_INIT_5_4 or LUA_INIT (`@file` runs a file).
    func handleLuaInit() -> Bool {
        var name = "=LUA_INIT_5_4"
        var value = getenv("LUA_INIT_5_4")
        if value == nil {
            name = "=LUA_INIT"
            value = getenv("LUA_INIT")
        }
        guard let value else { return true }
        let text = String(cString: value)
        if text.hasPrefix("@") { return doFile(String(text.dropFirst())) }
        return doString(text, name: name)
    }

    /// Runs -e, -l and -W in command-line order, up to the script.
    func runArguments(upTo limit: Int, skipping skipped: Set<Int>) -> Bool {
        var i = 1
        while i < limit {
            if skipped.contains(i) {
                i += 1
                continue
            }
            let arg = argv[i]
            let option = arg.dropFirst().first
            switch option {
            case "e", "l":
                var extra = String(arg.dropFirst(2))
                if extra.isEmpty {
                    i += 1
                    extra = argv[i]
                }
                let ok = option == "e" ? doString(extra, name: "=(command line)") : doLibrary(extra)
                if !ok { return false }
            case "W":
                state.stack.turnWarningsOn()
            default:
                break
            }
            i += 1
        }
        return true
    }

    /// Runs the script with the positive `arg` entries as its arguments.
    func handleScript(at index: Int) -> Bool {
        var path: String? = argv[index]
        if path == "-" && argv[index - 1] != "--" { path = nil }
        do {
            try stack.loadFile(path)
        } catch {
            return report(error)
        }
        stack.pushGlobalTable()
        guard stack.rawGet(-1, field: "arg") == .table else {
            stack.pop(3)
            return report(LuaError(kind: .runtime, message: "'arg' is not a table"))
        }
        let count = stack.rawLength(-1)
        guard count < 200_000, stack.ensureSpace(Int32(count) + 3) else {
            stack.pop(3)
            return report(LuaError(kind: .runtime, message: "too many arguments to script"))
        }
        let table = stack.top
        for i in 1 ... max(1, count) where count > 0 {
            stack.rawGet(table, i)
        }
        stack.remove(at: table)
        stack.remove(at: table - 1)
        do {
            try stack.call(arguments: Int32(count), results: 0)
            return true
        } catch {
            return report(error)
        }
    }
}
