namespace XCall;

/// <summary>Base type of every exception XCall raises itself.</summary>
public class XCallException : Exception
{
    /// <summary>Creates an exception with a message.</summary>
    public XCallException(string message) : base(message) { }

    /// <summary>Creates an exception with a message and the exception that caused it.</summary>
    public XCallException(string message, Exception? inner) : base(message, inner) { }
}
