namespace XCall.Bench;

/// <summary>One cell of the call-cost table.</summary>
internal sealed record CallResult(string Signature, string Transport, double NsPerCall, long? AllocatedBytesPerCall)
{
    /// <summary>ns per call divided by the local interface call (<c>loc</c> / <c>direct</c>) of the same run.</summary>
    public double? RatioToLocal { get; init; }

    /// <summary>ns per call divided by the machine limit of the same transport and size, measured in the same run.</summary>
    public double? RatioToLimit { get; init; }

    /// <summary>Extra information printed with the row.</summary>
    public string? Note { get; init; }
}
