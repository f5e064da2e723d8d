/// The seeds' block-KVO libraries, ported as aliases over the same observations.
///
/// CCEasyKVO: the observer owns the observation (it ends when the observer is collected, and
/// `cc_easyRemoveAllKVO(observer)` removes all of them). SJKVOController: one observation per
/// observer and key (adding the same pair again replaces it), `f(obj, key, old, new)` on every set.
extension Observation {
    static let compatibilityAliases: [BKFunction] = [
        // cc_easyObserve(observer, observee, keyPath, options, f(object, change)) -> identifier
        BKFunction("cc_easyObserve") { stack throws(LuaRaise) in
            try checkObserver(stack, 1)
            try checkObservable(stack, 2)
            try checkKeyPath(stack, 3)
            if !stack.isNoneOrNil(4) { try stack.checkTable(4) }
            try stack.checkFunction(5)
            try ObservationEngine.call(stack, "add", results: 1) { () throws(LuaRaise) in
                stack.pushCopy(of: 2)
                stack.pushNewTable(arrayCount: 1)
                stack.pushCopy(of: 3)
                stack.rawSet(-2, 1)
                stack.push("change")
                try pushOptions(stack, 4)
                stack.pushNil()
                stack.push(true)
                stack.pushCopy(of: 1)
                stack.pushCopy(of: 5)
            }
            return 1
        },
        // cc_easyRemoveAllKVO(observer): every observation `observer` made with cc_easyObserve
        // (or with the `observer` option), on any object.
        BKFunction("cc_easyRemoveAllKVO") { stack throws(LuaRaise) in
            try checkObserver(stack, 1)
            try ObservationEngine.call(stack, "removeByObserver", results: 0) { () throws(LuaRaise) in
                stack.pushCopy(of: 1)
            }
            return 0
        },
        // sj_addObserver(obj, observer, keyOrKeys, f(obj, key, old, new))
        BKFunction("sj_addObserver") { stack throws(LuaRaise) in
            try checkObservable(stack, 1)
            try checkObserver(stack, 2)
            let keys = try checkKeys(stack, 3)
            try stack.checkFunction(4)
            for i in 0 ..< keys {
                try ObservationEngine.call(stack, "sjIdentifier", results: 1) { () throws(LuaRaise) in
                    stack.pushCopy(of: 2)
                    pushKey(stack, 3, i)
                }
                let identifier = stack.top
                try ObservationEngine.call(stack, "add", results: 0) { () throws(LuaRaise) in
                    stack.pushCopy(of: 1)
                    stack.pushNewTable(arrayCount: 1)
                    pushKey(stack, 3, i)
                    stack.rawSet(-2, 1)
                    stack.push("sj")
                    stack.pushNewTable()
                    stack.pushCopy(of: identifier)
                    stack.push(true)
                    stack.pushCopy(of: 2)
                    stack.pushCopy(of: 4)
                }
                stack.pop()
            }
            return 0
        },
        // sj_removeObserver(obj, observer [, keyOrKeys])
        BKFunction("sj_removeObserver") { stack throws(LuaRaise) in
            try checkObserved(stack, 1)
            try checkObserver(stack, 2)
            let hasKeys = !stack.isNoneOrNil(3)
            if hasKeys { _ = try checkKeys(stack, 3) }
            try ObservationEngine.call(stack, "sjRemove", results: 0) { () throws(LuaRaise) in
                stack.pushCopy(of: 1)
                stack.pushCopy(of: 2)
                if !hasKeys {
                    stack.pushNil()
                } else if stack.type(at: 3) == .table {
                    stack.pushCopy(of: 3)
                } else {
                    stack.pushNewTable(arrayCount: 1)
                    stack.pushCopy(of: 3)
                    stack.rawSet(-2, 1)
                }
            }
            return 0
        },
        // sj_removeAllObservers(obj): every observation of obj.
        BKFunction("sj_removeAllObservers") { stack throws(LuaRaise) in
            try checkObserved(stack, 1)
            try ObservationEngine.call(stack, "removeAll", results: 0) { () throws(LuaRaise) in
                stack.pushCopy(of: 1)
            }
            return 0
        },
        // sj_listAllObservers(obj) -> { {observer = o, keyPaths = {...}}, ... }
        BKFunction("sj_listAllObservers") { stack throws(LuaRaise) in
            try checkObserved(stack, 1)
            try ObservationEngine.call(stack, "sjList", results: 1) { () throws(LuaRaise) in
                stack.pushCopy(of: 1)
            }
            return 1
        },
    ]

    /// An observer: any value but nil (it is a weak key).
    static func checkObserver(_ stack: LuaStack, _ index: Int32) throws(LuaRaise) {
        // A type error: the trampoline names an explicit nil "nil" and a missing argument "no value".
        if stack.isNoneOrNil(index) { throw .type(index, expected: "observer") }
    }

    /// A key or a list of keys (`keyOrKeys`); returns how many.
    static func checkKeys(_ stack: LuaStack, _ index: Int32) throws(LuaRaise) -> Int {
        if stack.type(at: index) != .table {
            try checkKeyPath(stack, index)
            return 1
        }
        let count = stack.listCount(index)
        try stack.argCheck(count > 0, index, "key list is empty")
        for i in 1 ... count {
            stack.rawGet(index, i)
            let type = stack.type(at: -1)
            let valid = type == .string ? !(stack.toString(-1) ?? "").isEmpty : (type == .number && stack.isInteger(-1))
            stack.pop()
            try stack.argCheck(valid, index, "invalid key at index \(i)")
        }
        return Int(count)
    }

    /// Pushes key number `i` (from 0) of the key-or-keys argument at `index`.
    static func pushKey(_ stack: LuaStack, _ index: Int32, _ i: Int) {
        if stack.type(at: index) == .table {
            stack.rawGet(index, Int64(i + 1))
        } else {
            stack.pushCopy(of: index)
        }
    }
}
