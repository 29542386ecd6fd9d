namespace XCall.Transport.Shm.Lending;

/// <summary>
/// The words in the segment's header through which a lender and its reader agree on each call's loans: one table
/// of <see cref="Count"/> 64-bit slots per direction, written by the lender of that direction and the reader of it.
/// A slot holds a generation (high 32 bits) and a state (low 2 bits). A loan's ticket, sent with the lent block,
/// names its slot and generation; the reader moves the slot from Lent to Reading for each read and back, the lender
/// takes it back by moving it from Lent to Revoked, so a read either finishes before the take-back or never starts.
/// </summary>
internal static unsafe class LoanSlots
{
    /// <summary>Slots per direction: how many calls of one side can have arrays lent at once (more are copied).</summary>
    public const int Count = 64;

    /// <summary>Bytes of one table.</summary>
    public const int TableLength = Count * sizeof(ulong);

    public const ulong Free = 0;
    public const ulong Lent = 1;
    public const ulong Reading = 2;
    public const ulong Revoked = 3;

    public static ulong Pack(uint generation, ulong state) => ((ulong)generation << 32) | state;

    public static ulong Ticket(int slot, uint generation) => ((ulong)(uint)slot << 32) | generation;

    public static int SlotOf(ulong ticket) => (int)(ticket >> 32);

    public static uint GenerationOf(ulong ticket) => (uint)ticket;
}
