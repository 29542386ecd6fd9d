namespace XCall.Marshal;

/// <summary>How objects of a class are created when a message is read (see docs/remoting.md, "Object graphs").</summary>
public enum GraphTypeKind
{
    /// <summary>An abstract class or an interface: only its known types are ever created.</summary>
    Abstract,

    /// <summary>
    /// Created empty with its parameterless constructor the moment its tag is read, then filled: its body
    /// is written and read breadth-first, so any depth and any cycle work.
    /// </summary>
    Mutable,

    /// <summary>
    /// Built from its members (a constructor, init-only or required members): its body follows its tag
    /// inline, so its nesting is bounded by <see cref="MarshalLimits.MaxDepth"/>, and it cannot be part of
    /// a cycle that runs through immutable types only.
    /// </summary>
    Immutable,
}
