
/// NSInvocation+BlocksKit: a target and a block, called later as `block(target)`.
///
/// The Lua values live in the userdata's user value (a table `{target = ..., block = ...}`), not in
/// Swift references, so an invocation that the target refers back to is still collectable.
public final class Invocation: LuaBridged {
    public static let luaClass = LuaClass(
        name: "bk.Invocation",
        methods: [
            // inv:invoke(...) returns block(target, ...). The call is made once this Swift frame
            // is gone (BK_CONTINUE_CALL): called from a task, the block may suspend it.
            BKFunction("invoke") { stack throws(LuaRaise) in
                _ = try stack.checkObject(Invocation.self, at: 1)
                let arguments = stack.top - 1
                guard stack.ensureSpace(arguments + 4) else { throw .message("too many arguments to 'invoke'") }
                stack.pushInvocationField(of: 1, "block")
                stack.pushInvocationField(of: 1, "target")
                var i: Int32 = 2
                while i <= arguments + 1 {
                    stack.pushCopy(of: i)
                    i += 1
                }
                return stack.continueWithCall(arguments: arguments + 1)
            },
        ],
        properties: [
            .readWrite("target", get: { (_: Invocation, stack) in
                stack.pushInvocationField(of: 1, "target")
            }, set: { (_: Invocation, stack, value) in
                stack.setInvocationField(of: 1, "target", value: value)
            }),
            .readOnly("block") { (_: Invocation, stack) in
                stack.pushInvocationField(of: 1, "block")
            },
        ]
    )

    init() {}
}

extension LuaStack {
    /// Pushes `field` of the invocation userdata at `index` (nil when absent).
    func pushInvocationField(of index: Int32, _ field: String) {
        let index = absolute(index)
        if pushUserValue(of: index) == .table {
            rawGet(-1, field: field)
            remove(at: -2)
        } else {
            pop()
            pushNil()
        }
    }

    func setInvocationField(of index: Int32, _ field: String, value: Int32) {
        let (index, value) = (absolute(index), absolute(value))
        if pushUserValue(of: index) == .table {
            pushCopy(of: value)
            rawSet(-2, field: field)
        }
        pop()
    }
}

extension BKLibrary {
    public static let invocation = BKLibrary(name: "Invocation", functions: [
        // invocationWithTarget(target, f): an invocation; inv:invoke() returns f(target).
        BKFunction("invocationWithTarget") { stack throws(LuaRaise) in
            try stack.checkFunction(2)
            stack.top = 2
            stack.push(object: Invocation())
            stack.pushNewTable(recordCount: 2)
            stack.pushCopy(of: 1)
            stack.rawSet(-2, field: "target")
            stack.pushCopy(of: 2)
            stack.rawSet(-2, field: "block")
            stack.setUserValue(of: -2)
            return 1
        },
    ])
}
