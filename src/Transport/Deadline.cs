namespace XCall.Transport;

/// <summary>Deadlines as <see cref="Environment.TickCount64"/> values, 0 meaning none, as frames and calls carry them.</summary>
public static class Deadline
{
    /// <summary>Milliseconds left until <paramref name="deadline"/>: -1 (infinite) for none, 0 once past.</summary>
    public static int RemainingMs(long deadline) =>
        deadline == 0 ? -1 : (int)Math.Clamp(deadline - Environment.TickCount64, 0, int.MaxValue);
}
