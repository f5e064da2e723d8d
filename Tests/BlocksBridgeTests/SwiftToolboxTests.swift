import Testing
import BlocksBridge

private struct Stop: Error, Equatable { let at: Int }

/// The toolbox's Swift counterparts on sequences (`Collections/SwiftToolbox.swift`), as a host
/// calls them (plain import).
@Suite struct SwiftToolboxTests {
    @Test func grouping() {
        let groups = [1, 2, 3, 4, 5, 6].bk_groupBy { $0 % 3 }
        #expect(groups == [0: [3, 6], 1: [1, 4], 2: [2, 5]])
        #expect(["a", "b", "a"].bk_countBy() == ["a": 2, "b": 1])
        #expect(["a", "bb", "cc"].bk_countBy { $0.count } == [1: 1, 2: 2])
        let (even, odd) = [1, 2, 3, 4].bk_partition { $0 % 2 == 0 }
        #expect(even == [2, 4] && odd == [1, 3])
        #expect([3, 1, 3, 2, 1].bk_uniq() == [3, 1, 2])
        #expect(["a", "bb", "c", "dd"].bk_uniq { $0.count } == ["a", "bb"])
    }

    @Test func chunksAndSums() {
        #expect([1, 2, 3, 4, 5].bk_chunked(2) == [[1, 2], [3, 4], [5]])
        #expect([Int]().bk_chunked(3).isEmpty)
        #expect([1, 2, 3].bk_sum() == 6)
        #expect([1.5, 2.5].bk_sum() == 4.0)
        #expect(["a", "bb"].bk_sum { $0.count } == 3)
    }

    @Test func orderingByKeyOncePerElement() {
        var calls = 0
        let words = ["ccc", "a", "bb", "dd", "e"]
        let sorted = words.bk_sortedBy { (w: String) -> Int in calls += 1; return w.count }
        #expect(sorted == ["a", "e", "bb", "dd", "ccc"])
        #expect(calls == words.count)
        #expect(words.bk_sortedBy(descending: true) { $0.count } == ["ccc", "bb", "dd", "a", "e"])
        #expect(words.bk_min { $0.count } == "a")
        #expect(words.bk_max { $0.count } == "ccc")
        #expect(["bb", "aa"].bk_max { $0.count } == "bb")  // the first on ties
        #expect([String]().bk_min { $0.count } == nil)
    }

    @Test func throwingKeyStopsTheHelper() {
        var calls = 0
        #expect(throws: Stop(at: 2)) {
            _ = try [1, 2, 3].bk_groupBy { (x: Int) throws(Stop) -> Int in
                calls += 1
                if x == 2 { throw Stop(at: 2) }
                return x
            }
        }
        #expect(calls == 2)
    }
}
