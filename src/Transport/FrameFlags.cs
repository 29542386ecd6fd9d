namespace XCall.Transport;

/// <summary>The bits of <see cref="FrameHeader.Flags"/>; bits not named here are zero.</summary>
public static class FrameFlags
{
    /// <summary>
    /// On a call frame: the call is nested in a call of the receiving side (made while the sender served that
    /// call, a callback). The payload begins with that call's id (8 bytes, little-endian), before the arguments.
    /// </summary>
    public const ushort Nested = 1;

    /// <summary>
    /// On a call frame: the caller waits for the reply (a synchronous call), so it cannot touch its arguments
    /// before the peer has read them. A transport may then lend the peer large arrays instead of copying them
    /// (<see cref="XCall.Marshal.IBlockLender"/>). No payload change.
    /// </summary>
    public const ushort CallerWaits = 2;

    /// <summary>
    /// On a call frame: the caller will send no cancel frame for this call (its token cannot be cancelled and no call
    /// timeout runs), so the receiving side may give the method a token shared by such calls, which only the link's
    /// loss or the connection's close cancels, instead of a source of the call's own. No payload change.
    /// </summary>
    public const ushort Uncancellable = 4;

    /// <summary>
    /// On a call frame: nobody polls for the reply, which may come much later (a method marked
    /// <c>[LongWait]</c>, awaited asynchronously); the receiving side sets the bit on the call's reply or error frame
    /// too. A transport that lets waiting callers read the incoming frames counts such a call as owed to no waiting
    /// thread, and wakes its receiving thread for the answer. No payload change.
    /// </summary>
    public const ushort LongWait = 8;
}
