package demo;

public class Box {
    private int size;

    public int size() {
        return size;
    }

    public void grow(int by) {
        size += by;
    }
}
