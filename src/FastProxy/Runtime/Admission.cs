using System.Runtime.CompilerServices;
using XCall.Runtime.CompilerServices;

namespace XCall.Runtime;

/// <summary>
/// The room a connection gives calls received under <see cref="DispatchMode.Concurrent"/>: how many may be queued
/// or running (<see cref="ConnectionOptions.MaxConcurrentCalls"/>) and how many bytes of arguments they may hold
/// (<see cref="ConnectionOptions.MaxConcurrentArgumentBytes"/>).
/// </summary>
// Design: _admitted counts the calls that are queued or running (their reply not sent yet) and the bytes of
// their arguments in one word: the count in the low CountBits bits, the bytes above. A call adds its weight
// (1 + bytes << CountBits) when it is admitted and subtracts it once, when its reply is published or it ends
// without one (ServerCall.Admitted, cleared then): one interlocked add each way for both bounds. Only the thread
// that receives the frames admits (a transport hands its frames over one at a time), after reading the word:
// other threads can only lower it meanwhile, so a call admitted never takes either figure past its bound by
// more than itself. The bounds keep the count under 2^24 and the bytes under 2^39: the word stays positive.
internal sealed class Admission(ConnectionOptions options)
{
    private const int CountBits = 24;
    private const long CountMask = (1L << CountBits) - 1;

    private long _admitted;

    /// <summary>Calls that are queued or running.</summary>
    public int Calls => (int)(Volatile.Read(ref _admitted) & CountMask);

    /// <summary>The bytes of those calls' arguments.</summary>
    public long ArgumentBytes => Volatile.Read(ref _admitted) >> CountBits;

    /// <summary>What a call with <paramref name="argumentBytes"/> of arguments takes.</summary>
    public static long Weight(int argumentBytes) => 1 + ((long)argumentBytes << CountBits);

    /// <summary>
    /// Takes room for <paramref name="call"/> within the bounds (receiving thread only); false when there is none,
    /// with what the calls admitted before it hold in <paramref name="held"/> (for <see cref="Refusal"/>).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool TryAdmit(ServerCall call, long weight, out long held)
    {
        held = Volatile.Read(ref _admitted);
        if ((held & CountMask) >= options.MaxConcurrentCalls || (held >> CountBits) >= options.MaxConcurrentArgumentBytes)
        {
            return false;
        }
        Interlocked.Add(ref _admitted, weight);
        call.Admitted = weight;
        return true;
    }

    /// <summary>Gives back the room <paramref name="call"/> holds, if any: when its reply is published, or it ends without one.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Release(ServerCall call)
    {
        long weight = call.Admitted;
        if (weight != 0)
        {
            call.Admitted = 0;
            Interlocked.Add(ref _admitted, -weight);
        }
    }

    /// <summary>Why a call was refused, from what <see cref="TryAdmit"/> found held.</summary>
    public string Refusal(long held)
    {
        long calls = held & CountMask;
        return calls >= options.MaxConcurrentCalls
            ? $"the connection already had {calls} calls queued or running there, its limit (ConnectionOptions.MaxConcurrentCalls = {options.MaxConcurrentCalls})"
            : $"the calls queued or running on the connection there already held {held >> CountBits} bytes of arguments, its limit (ConnectionOptions.MaxConcurrentArgumentBytes = {options.MaxConcurrentArgumentBytes})";
    }
}
