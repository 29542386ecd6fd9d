namespace XCall.Transport;

/// <summary>The bits of <see cref="FrameHeader.Flags"/>; bits not named here are zero.</summary>
public static class FrameFlags
{
    /// <summary>
    /// On a call frame: the call is nested in a call of the receiving side (made while the sender served that
    /// call, a callback). The payload begins with that call's id (8 bytes, little-endian), before the arguments.
    /// </summary>
    public const ushort Nested = 1;
}
