/// NSObject+BKBlockObservation for Lua tables and observable Swift objects.
///
/// These functions check their arguments (standard wording) and hand the work to the
/// `ObservationEngine`, which owns every observation of the state in Lua tables (so that
/// observations follow Lua's garbage collection: they never keep the observed object alive).
extension BKLibrary {
    public static let observation = BKLibrary(name: "Observation", functions: [
        // addObserverForKeyPath(obj, keyPath, [options,] task) -> identifier
        BKFunction("addObserverForKeyPath") { stack throws(LuaRaise) in
            try Observation.add(stack, multi: false)
        },
        // addObserverForKeyPaths(obj, keyPaths, [options,] task) -> identifier
        BKFunction("addObserverForKeyPaths") { stack throws(LuaRaise) in
            try Observation.add(stack, multi: true)
        },
        BKFunction("removeObserverForKeyPath") { stack throws(LuaRaise) in
            try Observation.checkObserved(stack, 1)
            try Observation.checkKeyPath(stack, 2)
            _ = try stack.checkString(3)
            try ObservationEngine.call(stack, "removeKeyPath", results: 0) { () throws(LuaRaise) in
                stack.pushCopy(of: 1); stack.pushCopy(of: 2); stack.pushCopy(of: 3)
            }
            return 0
        },
        BKFunction("removeObserversWithIdentifier") { stack throws(LuaRaise) in
            try Observation.checkObserved(stack, 1)
            _ = try stack.checkString(2)
            try ObservationEngine.call(stack, "removeIdentifier", results: 0) { () throws(LuaRaise) in
                stack.pushCopy(of: 1); stack.pushCopy(of: 2)
            }
            return 0
        },
        BKFunction("removeAllBlockObservers") { stack throws(LuaRaise) in
            try Observation.checkObserved(stack, 1)
            try ObservationEngine.call(stack, "removeAll", results: 0) { () throws(LuaRaise) in
                stack.pushCopy(of: 1)
            }
            return 0
        },
        // observers(obj) -> { {identifier=, keyPaths={...}, options={...}, observer=}, ... }
        BKFunction("observers") { stack throws(LuaRaise) in
            try Observation.checkObserved(stack, 1)
            try ObservationEngine.call(stack, "list", results: 1) { () throws(LuaRaise) in
                stack.pushCopy(of: 1)
            }
            return 1
        },
    ] + Observation.compatibilityAliases)
}

/// Argument checks and the add path shared by the Observation functions.
enum Observation {
    static let optionNames = ["new", "old", "initial", "prior", "distinct"]

    /// `obj` must be a table or an observable Swift object.
    static func checkObservable(_ stack: LuaStack, _ index: Int32) throws(LuaRaise) {
        switch stack.type(at: index) {
        case .table: return
        case .userdata:
            guard stack.bridgedObject(at: index) is any LuaObservable else {
                throw .argument(index, "object is not observable")
            }
        default: throw .type(index, expected: "table")
        }
    }

    /// For removal and listing: anything that could have been observed (a table or a userdata).
    static func checkObserved(_ stack: LuaStack, _ index: Int32) throws(LuaRaise) {
        let type = stack.type(at: index)
        if type != .table && type != .userdata { throw .type(index, expected: "table") }
    }

    /// A key path: "a.b.c" (non-empty parts) or an integer key.
    static func checkKeyPath(_ stack: LuaStack, _ index: Int32) throws(LuaRaise) {
        if stack.type(at: index) == .number {
            _ = try stack.checkInteger(index)
            return
        }
        let path = try stack.checkString(index)
        if stack.type(at: index) != .string { throw .type(index, expected: "string") }
        try stack.argCheck(!path.isEmpty && !path.split(separator: ".", omittingEmptySubsequences: false)
                            .contains(where: \.isEmpty), index, "invalid key path '\(path)'")
    }

    /// Pushes the engine's options table `{new = true, ...}` for the options at `index` (a table
    /// or nil): list entries `"new"` or keys `new = true`; `fields` (`identifier`, `observer`) are
    /// read by the caller. An unknown option (entry or key) is an argument error.
    static func pushOptions(_ stack: LuaStack, _ index: Int32, fields: [String] = []) throws(LuaRaise) {
        var on: Set<String> = []
        if !stack.isNoneOrNil(index) {
            try stack.checkTable(index)
            on = try stack.checkOptions(index, flags: optionNames, fields: fields)
        }
        stack.pushNewTable()
        for name in optionNames where on.contains(name) {
            stack.push(true)
            stack.rawSet(-2, field: name)
        }
    }

    /// The shared body of addObserverForKeyPath(s): pushes the identifier.
    static func add(_ stack: LuaStack, multi: Bool) throws(LuaRaise) -> Int32 {
        try checkObservable(stack, 1)
        if multi {
            try stack.checkTable(2)
            let count = stack.listCount(2)
            try stack.argCheck(count > 0, 2, "key path list is empty")
        } else {
            try checkKeyPath(stack, 2)
        }
        // Options are a table at 3 (or nil with the task after it); otherwise the task is at 3.
        let hasOptions = stack.type(at: 3) == .table || (stack.type(at: 3) == .nil && stack.type(at: 4) != .none)
        let taskIndex: Int32 = hasOptions ? 4 : 3
        if !hasOptions && stack.type(at: 3) != .function {
            throw .type(3, expected: "table or function")   // options or the task
        }
        try stack.checkFunction(taskIndex)
        if hasOptions && !stack.isNoneOrNil(3) { try stack.checkTable(3) }

        try ObservationEngine.call(stack, "add", results: 1) { () throws(LuaRaise) in
            stack.pushCopy(of: 1)
            try pushKeyPaths(stack, multi: multi)
            stack.push(multi ? (hasOptions ? "changeMulti" : "plainMulti") : (hasOptions ? "change" : "plain"))
            if hasOptions { try pushOptions(stack, 3, fields: ["identifier", "observer"]) } else { stack.pushNewTable() }
            if hasOptions && stack.type(at: 3) == .table {
                // identifier
                stack.rawGet(3, field: "identifier")
                if !stack.isNoneOrNil(-1) && stack.type(at: -1) != .string {
                    throw .argument(3, "identifier must be a string")
                }
                // observer
                stack.rawGet(3, field: "observer")
                stack.push(!stack.isNoneOrNil(-1))
                stack.insert(at: -2)
            } else {
                stack.pushNil(); stack.push(false); stack.pushNil()
            }
            stack.pushCopy(of: taskIndex)
        }
        return 1
    }

    /// Pushes a fresh list of the key paths (one, or the list at 2 checked element by element).
    private static func pushKeyPaths(_ stack: LuaStack, multi: Bool) throws(LuaRaise) {
        guard multi else {
            stack.pushNewTable(arrayCount: 1)
            stack.pushCopy(of: 2)
            stack.rawSet(-2, 1)
            return
        }
        let count = stack.listCount(2)
        stack.pushNewTable(arrayCount: Int32(clamping: count))
        let list = stack.top
        for i in 1 ... count {
            stack.rawGet(2, i)
            let type = stack.type(at: -1)
            let valid: Bool
            if type == .string, let path = stack.toString(-1) {
                valid = !path.isEmpty && !path.split(separator: ".", omittingEmptySubsequences: false)
                    .contains(where: \.isEmpty)
            } else {
                valid = type == .number && stack.isInteger(-1)
            }
            if !valid {
                stack.pop()
                throw .argument(2, "invalid key path at index \(i)")
            }
            stack.rawSet(list, i)
        }
    }
}
