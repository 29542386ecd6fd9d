namespace XCall.Generator.Model;

/// <summary>What a remotable method returns.</summary>
internal enum ReturnKind
{
    Void,
    Value,
    Task,
    TaskOfT,
    ValueTask,
    ValueTaskOfT,

    /// <summary>IAsyncEnumerable&lt;T&gt;: the proxy returns a stream that calls the method when it is enumerated.</summary>
    AsyncEnumerable,
}

/// <summary>Questions about a <see cref="ReturnKind"/>.</summary>
internal static class ReturnKinds
{
    /// <summary>A task or value task, with or without a result: the call is awaited.</summary>
    public static bool IsTask(ReturnKind kind) => kind is ReturnKind.Task or ReturnKind.TaskOfT or ReturnKind.ValueTask or ReturnKind.ValueTaskOfT;
}

/// <summary>One method of a remotable interface.</summary>
/// <param name="Name">Method name.</param>
/// <param name="Id">Stable id: FNV-1a 32 of <paramref name="Signature"/>.</param>
/// <param name="Signature">Canonical signature text the id and the contract hash derive from.</param>
/// <param name="DeclaringInterface">Fully qualified interface that declares the method (for explicit implementation).</param>
/// <param name="ReturnTypeName">Declared return type text.</param>
/// <param name="Result">The result's type (the T of Task&lt;T&gt;), or null.</param>
internal sealed record MethodSpec(
    string Name,
    uint Id,
    string Signature,
    string DeclaringInterface,
    ReturnKind ReturnKind,
    string ReturnTypeName,
    TypeSpec? Result,
    bool OneWay,
    EquatableArray<ParameterSpec> Parameters)
{
    /// <summary>[LongWait] on an async method: its proxy begins calls with <c>BeginLongWaitCall</c> (not part of <see cref="Signature"/>).</summary>
    public bool LongWait { get; init; }
}
