import CLuaShim

extension BKLibrary {
    /// BlocksKit Core's collection helpers (NSArray, NSDictionary, NSSet, NSOrderedSet, NSIndexSet
    /// and their mutable kinds).
    public static let collections = BKLibrary(
        name: "Collections",
        functions: [
            BKFunction("array") { stack throws(LuaRaise) in try CollectionConstructors.mark(stack, as: .array) },
            BKFunction("dictionary") { stack throws(LuaRaise) in try CollectionConstructors.mark(stack, as: .dictionary) },
            BKFunction("set") { stack throws(LuaRaise) in try CollectionConstructors.makeSet(stack, kind: .set) },
            BKFunction("orderedSet") { stack throws(LuaRaise) in try CollectionConstructors.makeSet(stack, kind: .orderedSet) },
            BKFunction("indexSet") { stack throws(LuaRaise) in try CollectionConstructors.makeIndexSet(stack) },
            BKFunction("kind") { stack throws(LuaRaise) in try CollectionConstructors.kind(stack) },
        ] + collectionHelperFunctions,
        setUp: { stack, module in
            stack.makeNullSentinel()
            stack.pushNull()
            stack.rawSet(module, field: "null")
            stack.makeCollectionMetatables(module: module)
        }
    )

    /// The helpers, also the methods of every kind (`c:map(f)`, `c:bk_map(f)`).
    static let collectionHelperFunctions: [BKFunction] = [
        BKFunction("each") { stack throws(LuaRaise) in try CollectionHelpers.each(stack) },
        // Concurrent on the worker pool when the block is transferable (Workers/ParallelCollections).
        BKFunction("apply") { stack throws(LuaRaise) in try ParallelCollections.run(stack, mapping: false) },
        BKFunction("parallelMap") { stack throws(LuaRaise) in try ParallelCollections.run(stack, mapping: true) },
        BKFunction("match") { stack throws(LuaRaise) in try CollectionHelpers.match(stack) },
        BKFunction("select") { stack throws(LuaRaise) in try CollectionHelpers.filter(stack, keeping: true) },
        BKFunction("reject") { stack throws(LuaRaise) in try CollectionHelpers.filter(stack, keeping: false) },
        BKFunction("map") { stack throws(LuaRaise) in try CollectionHelpers.map(stack) },
        BKFunction("reduce") { stack throws(LuaRaise) in try CollectionHelpers.reduce(stack) },
        BKFunction("reduceInteger") { stack throws(LuaRaise) in try CollectionHelpers.reduceNumber(stack, integer: true) },
        BKFunction("reduceFloat") { stack throws(LuaRaise) in try CollectionHelpers.reduceNumber(stack, integer: false) },
        BKFunction("any") { stack throws(LuaRaise) in try CollectionHelpers.any(stack) },
        BKFunction("none") { stack throws(LuaRaise) in try CollectionHelpers.none(stack) },
        BKFunction("all") { stack throws(LuaRaise) in try CollectionHelpers.all(stack) },
        BKFunction("corresponds") { stack throws(LuaRaise) in try CollectionHelpers.corresponds(stack) },
        BKFunction("performSelect") { stack throws(LuaRaise) in try CollectionMutators.performFilter(stack, keeping: true) },
        BKFunction("performReject") { stack throws(LuaRaise) in try CollectionMutators.performFilter(stack, keeping: false) },
        BKFunction("performMap") { stack throws(LuaRaise) in try CollectionMutators.performMap(stack) },
    ]

    /// Methods of the kinds that are not `bk` functions (`count` is `bk.count`, of the toolbox).
    static let collectionMethods: [BKFunction] = [
        BKFunction("add") { stack throws(LuaRaise) in try CollectionConstructors.membership(stack, .add) },
        BKFunction("remove") { stack throws(LuaRaise) in try CollectionConstructors.membership(stack, .remove) },
        BKFunction("contains") { stack throws(LuaRaise) in try CollectionConstructors.membership(stack, .contains) },
    ]
}

extension LuaStack {
    /// One metatable per kind in the registry (`bk.array`, ...): `__bkkind`, `__name` and an
    /// `__index` table holding every helper as `bk_name` (the same functions as `bk.name`), and for
    /// list kinds also as `name`. A dictionary answers only its own keys and the `bk_` names, so
    /// `d.each` is nil, as a word-count table's `counts["map"]` must be.
    /// Sets copy theirs into a metatable of their own (see `SetMembership`).
    func makeCollectionMetatables(module: Int32) {
        let module = absolute(module)
        let size = Int32(BKLibrary.collectionHelperFunctions.count + BKLibrary.collectionMethods.count)
        pushNewTable(recordCount: size * 2)
        let methods = top
        pushNewTable(recordCount: size)
        let prefixed = top
        for helper in BKLibrary.collectionHelperFunctions {
            rawGet(module, field: helper.name)
            pushCopy(of: -1)
            pushCopy(of: -1)
            rawSet(prefixed, field: "bk_" + helper.name)
            rawSet(methods, field: helper.name)
            rawSet(methods, field: "bk_" + helper.name)
        }
        for method in BKLibrary.collectionMethods {
            push(function: method.name, method.body)
            pushCopy(of: -1)
            pushCopy(of: -1)
            rawSet(prefixed, field: "bk_" + method.name)
            rawSet(methods, field: method.name)
            rawSet(methods, field: "bk_" + method.name)
        }
        for kind in CollectionKind.allCases {
            pushNewTable(recordCount: 3)
            push(Int64(kind.rawValue))
            rawSet(-2, field: LuaStack.kindField)
            push(kind.metatableKey)
            rawSet(-2, field: "__name")
            pushCopy(of: kind.isList ? methods : prefixed)
            rawSet(-2, field: "__index")
            rawSet(LuaStack.registryIndex, field: kind.metatableKey)
        }
        pop(2)
    }
}
