import Testing
@testable import BlocksBridge
