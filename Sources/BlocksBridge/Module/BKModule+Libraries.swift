extension BKModule {
    /// Every library of the module. A new family adds its one line here.
    public static let libraries: [BKLibrary] = [
        .core,
        .collections,
        .collectionToolbox,
        .associatedObjects,
        .invocation,
        .blockExecution,
        .timers,
        .observation,
        .dynamicDelegates,
        .eventHandlers,
        .workers,
        .tasks,
    ]
}
