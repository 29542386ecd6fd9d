namespace XCall.Tests.DomainService;

using XCall.Tests.Contracts;

/// <summary>The <see cref="IShapes"/> service as it lives in its own load context.</summary>
public sealed class DomainShapes : Shapes
{
    /// <summary>The load context this instance lives in, to prove the call crossed contexts.</summary>
    public static string ContextName => System.Runtime.Loader.AssemblyLoadContext.GetLoadContext(typeof(DomainShapes).Assembly)?.Name ?? "?";
}

/// <summary>Greets with the name of its load context.</summary>
public sealed class ContextGreeter : IGreeter
{
    public string Greet(string name) => $"{name} from {DomainShapes.ContextName}";
}

/// <summary>The <see cref="IStreams"/> service as it lives in its own load context.</summary>
public sealed class ContextStreams : Streams
{
}
