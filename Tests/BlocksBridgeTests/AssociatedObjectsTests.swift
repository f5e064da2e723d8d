import Testing
@testable import BlocksBridge

private final class Owner {}

private final class Tracked {
    let onDeinit: () -> Void
    init(_ onDeinit: @escaping () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

private final class Document: AssociatedCopying {
    var text: String
    init(_ text: String) { self.text = text }
    func associatedCopy() -> Self { Self(text) }
}

@Suite struct AssociatedObjectsTests {
    @Test func associateReadRemove() {
        let a = Owner(), b = Owner()
        AssociatedObjects.associate(1, with: a, key: "x")
        AssociatedObjects.associate("two", with: b, key: "x")
        #expect(AssociatedObjects.value(for: a, key: "x") as? Int == 1)
        #expect(AssociatedObjects.value(for: b, key: "x") as? String == "two")
        #expect(AssociatedObjects.value(for: a, key: "missing") == nil)
        AssociatedObjects.associate(nil, with: a, key: "x")
        #expect(AssociatedObjects.value(for: a, key: "x") == nil)
        AssociatedObjects.associate(3, with: b, key: 7)
        AssociatedObjects.removeAll(from: b)
        #expect(AssociatedObjects.value(for: b, key: "x") == nil)
        #expect(AssociatedObjects.value(for: b, key: 7) == nil)
    }

    @Test func neverKeepsTheObjectAlive() {
        var released = false
        do {
            let owner = Tracked { released = true }
            AssociatedObjects.associate(owner, with: owner, key: "self")  // value = object: no cycle kept
            AssociatedObjects.removeAll(from: owner)
        }
        #expect(released)
        var released2 = false
        weak var weakOwner: Owner?
        do {
            let owner = Owner()
            weakOwner = owner
            AssociatedObjects.associate(Tracked { released2 = true }, with: owner, key: "v")
        }
        #expect(weakOwner == nil)
        // A new object at the same address never sees the old values.
        for _ in 0 ..< 100 {
            let fresh = Owner()
            #expect(AssociatedObjects.value(for: fresh, key: "v") == nil)
        }
        // The dead owner's values are released by a sweep (automatic as the table grows).
        AssociatedObjects.sweep()
        #expect(released2)
    }

    @Test func weakValues() {
        let owner = Owner()
        do {
            let value = Owner()
            AssociatedObjects.associateWeakly(value, with: owner, key: "w")
            #expect(AssociatedObjects.value(for: owner, key: "w") as AnyObject? === value)
        }
        #expect(AssociatedObjects.value(for: owner, key: "w") == nil)
    }

    @Test func copyPolicy() {
        let owner = Owner()
        let document = Document("a")
        AssociatedObjects.associate(document, with: owner, key: "doc", policy: .copy)
        document.text = "b"
        let stored = AssociatedObjects.value(for: owner, key: "doc") as? Document
        #expect(stored !== document)
        #expect(stored?.text == "a")
        AssociatedObjects.associate(document, with: owner, key: "same", policy: .strong)
        #expect(AssociatedObjects.value(for: owner, key: "same") as? Document === document)
    }
}
