using System.Runtime.CompilerServices;

namespace XCall.Marshal;

/// <summary>Which hash keys may be graph objects whose members are not read yet when the key itself is read.</summary>
internal static class GraphKeys
{
    /// <summary>False for unmanaged keys and strings (folded by the JIT for value types); true for anything
    /// that may hold a data object.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool MayBeIncomplete<T>() =>
        RuntimeHelpers.IsReferenceOrContainsReferences<T>() && typeof(T) != typeof(string);
}
