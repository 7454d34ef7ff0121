"""starter/client"""
