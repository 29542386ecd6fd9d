using System.Runtime.CompilerServices;

namespace XCall.Marshal;

public ref partial struct MarshalWriter
{
    /// <summary>
    /// Writes a reference to a class object of declared type <paramref name="declared"/>: tag 0 for null,
    /// 2 and the id for an object already written in this message, 1 (declared type) or 3 and the type id
    /// (known subtype) for a new one. A mutable object's body is queued and written breadth-first before the
    /// outermost reference returns, so depth and cycles cost no stack; an immutable object's body follows
    /// its tag at once.
    /// </summary>
    /// <exception cref="XCallException">The runtime type is neither the declared type nor one of its known
    /// types, an immutable object contains itself through immutable objects only, or objects that compare by
    /// value (<see cref="GraphType.ComparesByValue"/>) form a cycle on their own: the reader refuses each of
    /// these, so the message fails here instead of closing the connection there.</exception>
    public void WriteReference(object? value, GraphType declared)
    {
        if (_active != 0 && declared._isMutable && value is not null && !ReferenceEquals(value, _first) && value.GetType() == declared.Type)
        {
            WriteMutableMember(value, declared);
            return;
        }
        WriteAnyReference(value, declared);
    }

    /// <summary>
    /// The common case inside a graph: an object of exactly the declared, mutable type, not the message's
    /// first object. A back-reference, or the new-object tag with the body queued.
    /// </summary>
    private void WriteMutableMember(object value, GraphType type)
    {
        GraphWriteState graph = _graph ??= GraphWriteState.Rent();
        int found = graph.Find(value);
        if (found >= 0)
        {
            if (_currentByValue && graph.ComparesByValueAt(graph.FoundPosition))
            {
                graph.AddValueEdge(_current, graph.FoundPosition);
            }
            Write(WireFormat.BackReference);
            Write(found);
            return;
        }
        if (found == GraphWriteState.Building)
        {
            ThrowHelper.WriterImmutableCycle(value.GetType()); // only if another GraphType called this type immutable
        }
        graph.Add(value, _nextId++, building: false, pending: type, type.ComparesByValue, _current);
        Write(WireFormat.NewObject);
    }

    private void WriteAnyReference(object? value, GraphType declared)
    {
        if (value is null)
        {
            Write(WireFormat.Null);
            return;
        }

        // The first object of a message lives in this writer's fields; the others in a pooled identity map.
        if (_first is not null)
        {
            bool isFirst = ReferenceEquals(value, _first);
            int found = isFirst
                ? (_firstBuilding ? GraphWriteState.Building : _firstId)
                : (_graph ??= GraphWriteState.Rent()).Find(value);
            if (found >= 0)
            {
                if (_currentByValue && _active != 0)
                {
                    NoteValueBackReference(isFirst);
                }
                Write(WireFormat.BackReference);
                Write(found);
                return;
            }
            if (found == GraphWriteState.Building)
            {
                ThrowHelper.WriterImmutableCycle(value.GetType());
            }
        }

        // Only a new object needs its type checked: a back-reference is checked by the reader against the declared type.
        GraphType type;
        ushort typeId = 0;
        Type runtimeType = value.GetType();
        if (runtimeType == declared.Type)
        {
            type = declared;
        }
        else
        {
            type = declared.GetKnownType(runtimeType, out typeId) ?? throw UnknownType(runtimeType, declared);
        }

        bool mutable = type._isMutable;
        bool outermost = _active == 0;
        int id = _nextId++;
        int entry = -1;
        if (_first is null)
        {
            _first = value;
            _firstId = id;
            _firstBuilding = !mutable;
            _firstByValue = type.ComparesByValue;
        }
        else
        {
            // Inside another object, a mutable object's body waits its turn (breadth-first).
            entry = _graph!.Add(value, id, building: !mutable, pending: mutable && !outermost ? type : null, type.ComparesByValue, outermost ? -1 : _current);
        }
        int position = entry + 1; // 0 for the first object
        if (type == declared)
        {
            Write(WireFormat.NewObject);
        }
        else
        {
            Write(WireFormat.NewKnownType);
            Write(typeId);
        }

        _active++;
        if (!mutable)
        {
            int outerCurrent = _current;
            bool outerByValue = _currentByValue;
            EnterObject();
            EnterBody(position, type);
            type.WriteBody(ref this, value);
            _current = outerCurrent;
            _currentByValue = outerByValue;
            ExitObject();
            if (entry < 0)
            {
                _firstBuilding = false;
            }
            else
            {
                _graph!.Built(entry);
            }
        }
        else if (outermost)
        {
            // The queue is empty outside any object: this body would be the next one drained anyway.
            EnterBody(position, type);
            type.WriteBody(ref this, value);
        }
        if (outermost && _graph is not null)
        {
            DrainGraph(_graph);
            int cycle = _graph.FindValueCycle(_firstByValue);
            if (cycle >= 0)
            {
                ThrowHelper.WriterValueCycle((cycle == 0 ? _first! : _graph.Get(cycle)).GetType());
            }
        }
        _active--;
    }

    /// <summary>The members of the object at <paramref name="position"/> are written next: references written now come from it.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void EnterBody(int position, GraphType type)
    {
        _current = position;
        _currentByValue = type.ComparesByValue;
    }

    /// <summary>
    /// A reference from the current object, which compares by value, back to an earlier object: when that
    /// one compares by value too, the reference may close a cycle the reader refuses, searched for once the
    /// outermost object is written.
    /// </summary>
    private void NoteValueBackReference(bool toFirst)
    {
        if (toFirst)
        {
            if (_firstByValue)
            {
                (_graph ??= GraphWriteState.Rent()).AddValueEdge(_current, 0);
            }
        }
        else if (_graph!.ComparesByValueAt(_graph.FoundPosition))
        {
            _graph.AddValueEdge(_current, _graph.FoundPosition);
        }
    }

    private void DrainGraph(GraphWriteState graph)
    {
        while (graph.TryDequeue(out object value, out GraphType type, out int position))
        {
            EnterBody(position, type);
            type.WriteBody(ref this, value);
        }
    }

    private void EndGraph()
    {
        _first = null;
        _firstBuilding = false;
        _firstByValue = false;
        _current = 0;
        _currentByValue = false;
        _active = 0;
        if (_graph is not null)
        {
            GraphWriteState.Return(_graph);
            _graph = null;
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static XCallException UnknownType(Type runtimeType, GraphType declared) => new(
        declared.Kind == GraphTypeKind.Abstract || runtimeType.IsAssignableTo(declared.Type)
            ? $"Cannot marshal an object of type '{runtimeType.FullName}' where '{declared.Type.FullName}' is declared: it is not one of its known types. " +
              $"List it on '{declared.Type.Name}' with [XCallKnownType(typeof({runtimeType.Name}), id)] (a small id unique to '{declared.Type.Name}'), or pass a '{declared.Type.Name}'."
            : $"Cannot marshal an object of type '{runtimeType.FullName}' where '{declared.Type.FullName}' is declared.");
}
