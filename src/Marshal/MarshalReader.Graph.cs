using System.Runtime.CompilerServices;

namespace XCall.Marshal;

public ref partial struct MarshalReader
{
    /// <summary>
    /// Reads a reference written by <see cref="MarshalWriter.WriteReference"/>: null, an object read
    /// before in this message (the same instance), or a new object of the declared type or of one of its
    /// known types. A mutable object is created empty and registered at once, its body read breadth-first
    /// before the outermost reference returns, so every object is complete when that one returns.
    /// </summary>
    /// <exception cref="XCallProtocolException">A bad tag, an unknown type id, a reference id that names no
    /// earlier object or an object of another type, a cycle through immutable objects, a cycle through
    /// objects that compare by value (<see cref="GraphType.ComparesByValue"/>: their equality, hash code and
    /// printing would recurse around it for ever), or a constructor or setter that throws on what the payload
    /// holds.</exception>
    public T? ReadReference<T>(GraphType declared) where T : class
    {
        byte tag = Read<byte>();
        if (tag == WireFormat.NewObject && _active != 0 && declared._isMutable)
        {
            // The common case inside a graph: a new object of the declared type, its body read later.
            return (T)ReadQueuedObject(declared);
        }
        return ReadTaggedReference<T>(tag, declared);
    }

    private T? ReadTaggedReference<T>(byte tag, GraphType declared) where T : class
    {
        GraphType type;
        switch (tag)
        {
            case WireFormat.Null:
                return null;
            case WireFormat.BackReference:
                return ReadBackReference<T>();
            case WireFormat.NewObject:
                if (!declared._isConcrete)
                {
                    ThrowHelper.AbstractNewObject(declared.Type);
                }
                type = declared;
                break;
            case WireFormat.NewKnownType:
                ushort typeId = Read<ushort>();
                type = declared.GetKnownType(typeId)!;
                if (type is null)
                {
                    ThrowHelper.UnknownTypeId(typeId, declared.Type);
                }
                break;
            default:
                ThrowHelper.BadTag("object reference", tag);
                return null;
        }

        if (_active != 0)
        {
            return (T)ReadNewObject(type, outermost: false);
        }
        try
        {
            return (T)ReadNewObject(type, outermost: true);
        }
        catch (Exception e) when (e is not XCallException)
        {
            // A constructor or setter that rejects what the payload holds: the payload is what is wrong.
            throw new XCallProtocolException($"Creating a '{type.Type.FullName}' from the payload failed: {e.Message}", e);
        }
    }

    private object ReadNewObject(GraphType type, bool outermost)
    {
        if (type._isMutable && !outermost)
        {
            return ReadQueuedObject(type);
        }
        int id = _objectCount++;
        int parent = outermost ? -1 : _current;
        int outerCurrent = _current;
        bool outerByValue = _currentByValue;
        _active++;
        object value;
        if (type._isMutable)
        {
            // Outside any object no body is pending: this one is the next anyway.
            value = type.CreateEmpty();
            Register(id, value, type, parent);
            _incomplete++;
            EnterBody(id, type);
            type.ReadBody(ref this, value);
            _incomplete--;
        }
        else
        {
            Register(id, GraphReadState.BuildingMarker, type, parent);
            EnterObject();
            EnterBody(id, type);
            value = type.ReadObject(ref this);
            _current = outerCurrent;
            _currentByValue = outerByValue;
            ExitObject();
            if (id == 0)
            {
                _first = value;
            }
            else
            {
                _graph!.Replace(id - 1, value);
            }
        }
        if (outermost && _graph is not null)
        {
            DrainGraph(_graph);
        }
        _active--;
        return value;
    }

    /// <summary>A new mutable object inside another object: created empty and registered now, its body read
    /// breadth-first before the outermost reference returns.</summary>
    private object ReadQueuedObject(GraphType type)
    {
        object value = type.CreateEmpty();
        _objectCount++; // never id 0: the object it is inside came first
        (_graph ??= GraphReadState.Rent()).Append(value, type, type.ComparesByValue, _current);
        _incomplete++;
        return value;
    }

    /// <summary>
    /// Runs <paramref name="action"/> once every object read so far is complete: at once when no mutable
    /// object is waiting for its members, else before the outermost reference returns. Hash sets and
    /// dictionaries add their keys this way, so a key's hash code never sees an object whose members are
    /// not read yet.
    /// </summary>
    public void WhenGraphComplete(Action action)
    {
        if (_incomplete > 0)
        {
            (_graph ??= GraphReadState.Rent()).Defer(action);
        }
        else
        {
            action();
        }
    }

    /// <summary>Whether some mutable object read so far still waits for its members, so that
    /// <see cref="WhenGraphComplete"/> would defer its work.</summary>
    public readonly bool HasIncompleteObjects => _incomplete > 0;

    private void Register(int id, object value, GraphType type, int parent)
    {
        if (id == 0)
        {
            _first = value;
            _firstByValue = type.ComparesByValue;
        }
        else
        {
            (_graph ??= GraphReadState.Rent()).Append(value, pending: null, type.ComparesByValue, parent);
        }
    }

    /// <summary>The members of object <paramref name="id"/> are read next: references read now come from it.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void EnterBody(int id, GraphType type)
    {
        _current = id;
        _currentByValue = type.ComparesByValue;
    }

    private T ReadBackReference<T>() where T : class
    {
        int id = Read<int>();
        if ((uint)id >= (uint)_objectCount)
        {
            ThrowHelper.BadReference(id, _objectCount);
        }
        object value = id == 0 ? _first! : _graph!.Get(id - 1);
        if (ReferenceEquals(value, GraphReadState.BuildingMarker))
        {
            ThrowHelper.ImmutableCycle(id);
        }
        if (value is not T typed)
        {
            ThrowHelper.ReferenceTypeMismatch(id, value.GetType(), typeof(T));
            return null;
        }
        if (_currentByValue && _active != 0 && (id == 0 ? _firstByValue : _graph!.ComparesByValue(id - 1)))
        {
            // Only a reference back to an earlier object can close a cycle; one between two objects that
            // compare by value is checked once every object is read (GraphReadState.CheckValueCycles).
            (_graph ??= GraphReadState.Rent()).AddValueEdge(_current, id);
        }
        return typed;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void DrainGraph(GraphReadState graph)
    {
        while (true)
        {
            while (graph.TryDequeue(out object value, out GraphType type, out int id))
            {
                EnterBody(id, type);
                type.ReadBody(ref this, value);
                _incomplete--;
            }
            graph.CheckValueCycles(_firstByValue); // before a hash set or dictionary hashes its keys
            if (!graph.HasDeferred)
            {
                return;
            }
            graph.RunDeferred();
        }
    }

    private void EndGraph()
    {
        _first = null;
        _firstByValue = false;
        _current = 0;
        _currentByValue = false;
        _objectCount = 0;
        _active = 0;
        _incomplete = 0;
        if (_graph is not null)
        {
            GraphReadState.Return(_graph);
            _graph = null;
        }
    }
}
